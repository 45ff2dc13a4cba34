"""The same eager, PyTorch-style code run two ways: eagergrad's own backward, and
jax.grad over tracers through `eagergrad.jaxify`. Complex inputs show the convention:
eagergrad gives dL/dz* (PyTorch's), which is conj of jax.grad's dL/dz."""
import jax
import jax.numpy as jnp
import numpy as np

import eagergrad as torch


def loss(w, z):
    return ((w * z).abs() ** 2).sum() + (w.sin() * w).mean()


w0 = np.linspace(-1.0, 1.0, 5)
z0 = np.exp(1j * np.linspace(0.0, 3.0, 5))

w = torch.tensor(w0, requires_grad=True)
z = torch.tensor(z0, requires_grad=True)
loss(w, z).backward()

jw, jz = jax.grad(torch.jaxify(loss), argnums=(0, 1))(jnp.asarray(w0), jnp.asarray(z0))
assert np.allclose(w.grad.numpy(), np.asarray(jw))
assert np.allclose(z.grad.numpy(), np.conj(np.asarray(jz)))  # dL/dz* == conj(dL/dz)
print("real input:    eagergrad == jax.grad")
print("complex input: eagergrad == conj(jax.grad)")
