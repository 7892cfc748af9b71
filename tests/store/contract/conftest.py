"""Every contract test gets `stores`: a fresh knowledge base, once per backend."""

from store.backends import stores  # noqa: F401
