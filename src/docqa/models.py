"""Models: what a knowledge base runs on — its embedder, retriever, chat model and escalation model.

Each is built on first use from the settings (a command that only lists documents loads none of
them), shared by the services of one `KnowledgeBase`, and closed with it unless it was given.
"""

from __future__ import annotations

from pathlib import Path

from docqa.embed import Embedder, Fingerprint, make_embedder
from docqa.errors import EmbedderMismatchError
from docqa.llm import ChatModel, Choice, capability, choose_chat_model
from docqa.llm.factory import OLLAMA_URL, escalation_model
from docqa.retrieve import Retriever
from docqa.settings import Settings
from docqa.store import Stores


class Models:
    """The models of one knowledge base.  `embedder`: True builds the configured one on first use, an
    instance or None overrides it; `chat_model`: the model that writes answers (default: chosen from
    settings.llm), a `Choice` used as made."""

    def __init__(self, settings: Settings, store: Stores, embedder: Embedder | None | bool = True,
                 chat_model: ChatModel | Choice | None = None):
        self.settings, self.store = settings, store
        self._embedder = embedder
        self._owns_embedder = embedder is True
        self._retriever: Retriever | None = None
        self._given = chat_model
        self._chat: Choice | None = chat_model if isinstance(chat_model, Choice) else None
        self._escalation: ChatModel | None = None

    @property
    def embedder(self) -> Embedder | None:
        """The configured embedder (None: BM25 only); built on first use."""
        if self._embedder is True:
            e = self.settings.embed
            self._embedder = make_embedder(e.provider, e.model, e.base_url, e.api_key, e.timeout, e.window_chars)
        return self._embedder  # type: ignore[return-value]

    @property
    def retriever(self) -> Retriever:
        if self._retriever is None:
            self._retriever = Retriever(self.store, self.settings.search, self.embedder)
        return self._retriever

    def forget_retriever(self) -> None:
        """The vectors changed under the retriever (a reindex): the next search builds a new one."""
        if self._retriever is not None:
            self._retriever.close()
            self._retriever = None

    def reindexer(self) -> Embedder | None:
        """The embedder a reindex embeds with: the configured one at its current input recipe.  When the
        shared one took on an index's earlier recipe (Embedder.adopt), searches keep it until the reindex
        ends and a new one is made for the reindex."""
        embedder = self.embedder
        if embedder is None or not embedder.adopted:
            return embedder
        if self._owns_embedder:
            e = self.settings.embed
            return make_embedder(e.provider, e.model, e.base_url, e.api_key, e.timeout, e.window_chars)
        embedder.restore()
        return embedder

    def check_embedder(self, writing: bool) -> None:
        """Refuse to mix vectors of two models: the index records which one made its vectors."""
        configured = self.embedder.fingerprint if self.embedder else None
        vectors = self.store.vectors
        raw = vectors.embedder()
        stored = Fingerprint.from_json(raw) if raw else None
        if stored == configured:
            return
        if vectors.vector_count()[1] == 0:  # an empty index adopts the configured embedder
            vectors.set_embedder(configured.to_json() if configured else None, configured.key if configured else None)
            return
        if stored is not None and configured is not None and self.embedder.adopt(stored.key):
            return  # an earlier input recipe of the same model: read as it was built, until a reindex
        if stored is None and configured is not None:
            problem = f"its chunks have no vectors of {configured.name} yet"
        elif configured is None:
            if not writing:
                return  # BM25 still works; new chunks would lack vectors, so writing is refused
            problem = f"it holds vectors of {stored.name}, but embed.provider is 'none'"
        else:
            problem = f"it was embedded with {stored.key}, but the configured embedder is {configured.key}"
        raise EmbedderMismatchError(
            f"{self.settings.kb}: {problem}. Run 'docqa reindex' to embed it with the configured model "
            "(incremental and resumable), or configure the embedder it was built with."
        )

    def warm(self) -> None:
        """Load now what a first search loads (the embedding model, the stored vectors); nothing when
        there is no embedder or its vectors are not the index's."""
        embedder = self.embedder
        if embedder is None:
            return
        embedder.warm()
        stored = self.store.vectors.embedder()
        if stored and Fingerprint.from_json(stored) == embedder.fingerprint:
            self.store.vectors.prepare(self.retriever.model_key)

    @property
    def chat(self) -> Choice:
        """The chat model answers come from (None: extractive) and why; chosen once, on first use."""
        if self._chat is None:
            s = self.settings.llm
            if self._given is not None and not isinstance(self._given, Choice):  # a Choice is _chat already
                self._chat = Choice(self._given, f"{self._given.name} (given)", source="given")
            else:
                from docqa.llm.local import default_models_dir
                from docqa.llm.server import LocalServing

                local = LocalServing(Path(s.models_dir).expanduser() if s.models_dir else default_models_dir(),
                                     ctx=max(4096, s.context_window))
                self._chat = choose_chat_model(s.provider, s.base_url, s.model, s.api_key, s.temperature, s.max_tokens,
                                               s.timeout, s.max_retries, s.ollama_url or OLLAMA_URL,
                                               via=s.from_environment.get("base_url"), local=local)
            capability.declare(self._chat.model, s.tool_calling)  # small? calls tools reliably?
        return self._chat

    @property
    def chosen(self) -> bool:
        """A chat model was given or chosen already (an estimate then is for it, not for one found anew)."""
        return self._chat is not None or self._given is not None

    def choose_again(self, model: ChatModel | None = None) -> None:
        """Forget the chat model chosen: the next use takes `model`, or (None) chooses from the settings as they are now."""
        self._chat, self._given = None, model

    @property
    def escalation(self) -> ChatModel | None:
        """llm.escalation_model, asked once when every review round was rejected (docqa.answer.escalate)."""
        s = self.settings.llm
        if self._escalation is None and s.escalation_model:
            self._escalation = escalation_model(s.escalation_model, s.escalation_base_url, s.escalation_api_key,
                                                default_url=s.base_url, default_key=s.api_key, timeout=s.timeout,
                                                max_retries=s.max_retries, temperature=s.temperature, max_tokens=s.max_tokens)
        return self._escalation

    def close(self) -> None:
        """Close the models this knowledge base started (not those it was given)."""
        if self._chat is not None and self._chat.model is not None and self._given is None:
            self._chat.model.close()
        if self._retriever is not None:
            self._retriever.close()
        if self._owns_embedder and isinstance(self._embedder, Embedder):
            self._embedder.close()
