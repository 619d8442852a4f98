"""Small torch module classes for the TorchModuleLearner tests and the audit's torch-target test."""

import torch


class TinyNet(torch.nn.Module):
    """Linear -> tanh -> Linear: logits."""

    def __init__(self, n_in: int = 4, hidden: int = 8, n_out: int = 2):
        super().__init__()
        self.fc1 = torch.nn.Linear(n_in, hidden)
        self.fc2 = torch.nn.Linear(hidden, n_out)

    def forward(self, x):
        return self.fc2(torch.tanh(self.fc1(x)))


class SoftmaxNet(TinyNet):
    """Ends in a softmax: outputs probabilities."""

    def forward(self, x):
        return torch.softmax(super().forward(x), dim=-1)


class BatchNormNet(torch.nn.Module):
    """BatchNorm updates its running statistics in place: vmap cannot run it (one-at-a-time fallback)."""

    def __init__(self, n_in: int = 4, n_out: int = 2):
        super().__init__()
        self.bn = torch.nn.BatchNorm1d(n_in)
        self.fc = torch.nn.Linear(n_in, n_out)

    def forward(self, x):
        return self.fc(self.bn(x))
