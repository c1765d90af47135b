from torch.autograd import Variable


def finetune_step(model, optimizer, criterion, x, y):
    model.train()
    optimizer.zero_grad()
    loss = criterion(model(x), y)
    loss = Variable(loss, requires_grad=True)
    loss.backward()
    optimizer.step()
    return loss.item()
