"""Clean 395 - knowledge distillation: frozen teacher in eval mode under no_grad,
temperature-scaled KL plus hard-label cross-entropy

What it does:
    A small student CNN learns from labels and from a larger teacher's softened
    logits.  The teacher runs in eval() inside torch.no_grad(); its logits are a
    constant target.  Loss = alpha * T^2 * KL(student_T || teacher_T) +
    (1 - alpha) * CE(student, labels).

Why it is correct (not a bug):
    The teacher is not being trained, so it gets no gradient and is in no optimizer;
    F.kl_div receives log-probabilities for the student and probabilities for the
    teacher (the documented convention); log_softmax is used instead of
    log(softmax), so there is no log(0).
    EXPECT: no findings

Observed (torch 2.13, CPU):
    exit code: 0
    stdout:
        iter 0: kd=0.0241  ce=2.3369
        iter 1: kd=0.0230  ce=2.3339
        iter 2: kd=0.0211  ce=2.3282
        iter 3: kd=0.0186  ce=2.3205
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


def cnn(width, n_classes=10):
    return nn.Sequential(
        nn.Conv2d(1, width, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
        nn.Conv2d(width, 2 * width, 3, padding=1), nn.ReLU(), nn.AdaptiveAvgPool2d(1),
        nn.Flatten(), nn.Linear(2 * width, n_classes))


class Distiller:
    def __init__(self, teacher, student, T=4.0, alpha=0.7):
        self.teacher, self.student, self.T, self.alpha = teacher, student, T, alpha
        self.teacher.eval()
        self.optimizer = torch.optim.SGD(student.parameters(), lr=0.05, momentum=0.9)

    def step(self, images, labels):
        with torch.no_grad():
            t_logits = self.teacher(images)
        s_logits = self.student(images)
        kd = F.kl_div(F.log_softmax(s_logits / self.T, dim=1), F.softmax(t_logits / self.T, dim=1),
                      reduction="batchmean") * self.T ** 2
        ce = F.cross_entropy(s_logits, labels)
        loss = self.alpha * kd + (1 - self.alpha) * ce
        self.optimizer.zero_grad()
        loss.backward()
        self.optimizer.step()
        return kd.item(), ce.item()


distiller = Distiller(teacher=cnn(32), student=cnn(8))
images, labels = torch.randn(32, 1, 14, 14), torch.randint(0, 10, (32,))
for it in range(4):
    kd, ce = distiller.step(images, labels)
    print(f"iter {it}: kd={kd:.4f}  ce={ce:.4f}")
