"""Actor and critic networks (the on-policy code's MLP/GRU bases, CleanRL's init).

Body: ``[LayerNorm(in)] -> (Linear -> act -> [LayerNorm]) x num_layers -> [GRU -> [LayerNorm]]``.
Every Linear is orthogonally initialised with the activation's gain (bias 0); the policy head
with ``policy_gain`` (0.01), the value head with 1.0.  A recurrent body processes time-major
sequences ``[T, B, d]`` from an initial hidden state, zeroing the hidden state of row b before
step t where ``starts[t, b]`` (a new episode begins there).
"""

from __future__ import annotations

import torch
from torch import nn

__all__ = ["Body", "Actor", "Critic", "layer_init", "with_agent_id"]


def layer_init(layer: nn.Linear, gain: float, bias: float = 0.0) -> nn.Linear:
    nn.init.orthogonal_(layer.weight, gain)
    nn.init.constant_(layer.bias, bias)
    return layer


class Body(nn.Module):
    def __init__(self, in_dim: int, hidden: int, num_layers: int, activation: str,
                 layer_norm: bool, use_gru: bool) -> None:
        super().__init__()
        act = {"tanh": nn.Tanh, "relu": nn.ReLU}[activation]
        gain = nn.init.calculate_gain(activation)
        layers: list[nn.Module] = [nn.LayerNorm(in_dim)] if layer_norm else []
        width = in_dim
        for _ in range(num_layers):
            layers += [layer_init(nn.Linear(width, hidden), gain), act()]
            if layer_norm:
                layers.append(nn.LayerNorm(hidden))
            width = hidden
        self.mlp = nn.Sequential(*layers)
        self.hidden = hidden
        self.gru = None
        if use_gru:
            self.gru = nn.GRUCell(hidden, hidden)
            for name, p in self.gru.named_parameters():
                if "weight" in name:
                    nn.init.orthogonal_(p)
                else:
                    nn.init.zeros_(p)
            self.gru_norm = nn.LayerNorm(hidden) if layer_norm else nn.Identity()

    @property
    def recurrent(self) -> bool:
        return self.gru is not None

    def forward(self, x: torch.Tensor, h: torch.Tensor | None = None,
                starts: torch.Tensor | None = None) -> tuple[torch.Tensor, torch.Tensor | None]:
        """MLP: ``x[..., d] -> features[..., H]`` (h ignored, returned as None).
        GRU: ``x[T, B, d]``, ``h[B, H]``, ``starts[T, B]`` -> ``(features[T, B, H], h_T)``."""
        z = self.mlp(x)
        if self.gru is None:
            return z, None
        if h is None or starts is None:
            raise ValueError("a recurrent body needs the hidden state h[B, H] and starts[T, B]")
        outs = []
        keep = (~starts).to(z.dtype).unsqueeze(-1)
        for t in range(z.shape[0]):
            h = self.gru(z[t], h * keep[t])
            outs.append(h)
        return self.gru_norm(torch.stack(outs)), h


class Actor(nn.Module):
    """Shared policy of one group: ``obs[..., obs_dim] -> out[..., head.n_outputs]``, the
    parameters of its action distribution ``dist`` (``war_train.learn.distributions``: logits, or a
    Gaussian's means with the head's own learned log-std)."""

    def __init__(self, in_dim: int, dist, cfg) -> None:
        super().__init__()
        self.body = Body(in_dim, cfg.hidden_size, cfg.num_layers, cfg.activation, cfg.layer_norm, cfg.use_gru)
        self.head = layer_init(nn.Linear(cfg.hidden_size, dist.n_outputs), cfg.policy_gain)
        self.dist = dist

    def forward(self, x, h=None, starts=None):
        z, h = self.body(x, h, starts)
        return self.head(z), h


class Critic(nn.Module):
    """Centralized value of one group: ``state[..., state_dim] -> values[..., n_agents]``
    (one output per agent of the group, since agents' rewards may differ)."""

    def __init__(self, state_dim: int, n_out: int, cfg) -> None:
        super().__init__()
        self.body = Body(state_dim, cfg.hidden_size, cfg.num_layers, cfg.activation, cfg.layer_norm, cfg.use_gru)
        self.head = layer_init(nn.Linear(cfg.hidden_size, n_out), 1.0)

    def forward(self, x, h=None, starts=None):
        z, h = self.body(x, h, starts)
        return self.head(z), h


def with_agent_id(obs: torch.Tensor) -> torch.Tensor:
    """Append a one-hot agent index to ``obs[..., n, d]`` -> ``[..., n, d + n]``."""
    n = obs.shape[-2]
    eye = torch.eye(n, dtype=obs.dtype, device=obs.device).expand(*obs.shape[:-1], n)
    return torch.cat([obs, eye], dim=-1)
