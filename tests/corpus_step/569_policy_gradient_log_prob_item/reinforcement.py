import torch
import torch.nn.functional as F


class Reinforcement:
    def __init__(self, generator, optimizer, get_reward, gamma=0.97):
        self.generator = generator
        self.optimizer = optimizer
        self.get_reward = get_reward
        self.gamma = gamma

    def sample(self, length):
        h = self.generator.init_hidden()
        token = torch.zeros(1, dtype=torch.long)
        tokens, steps = [], []
        for _ in range(length):
            logits, h = self.generator(token, h)
            log_probs = F.log_softmax(logits, dim=1)
            token = torch.multinomial(log_probs.exp(), 1).view(1)
            tokens.append(token.item())
            steps.append((log_probs, token.item()))
        return tokens, steps

    def policy_gradient(self, n_batch, length):
        self.optimizer.zero_grad()
        rl_loss = torch.zeros((), requires_grad=True)
        total_reward = 0.0
        for _ in range(n_batch):
            tokens, steps = self.sample(length)
            reward = self.get_reward(tokens)
            discounted_reward = reward
            for log_probs, top_i in steps:
                rl_loss = rl_loss - log_probs[0, top_i].item() * discounted_reward  # <- CAUSE
                discounted_reward = discounted_reward * self.gamma
            total_reward += reward
        rl_loss = rl_loss / n_batch
        rl_loss.backward()
        self.optimizer.step()
        return rl_loss.item()
