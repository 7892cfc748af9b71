"""The low half of a run, below the answer pipeline and the agent: `Control` (steer, follow up or cancel
from another thread) and `RunContext` (the audit trace, timings, usage, the time limit and the model call).
They import only llm, types and errors, so answer and agent can use them while run/ sits above both."""
