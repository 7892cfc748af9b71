"""A question's life: mode choice, the run record, limits, cancel, steering, follow-ups.

`life.Run` hands out one iterator of typed events plus a handle (steer, follow_up, cancel, answer).
`control` and `context` sit below the answer pipeline and the agent (they import only llm, types
and errors); this package's `__init__` imports nothing, so importing them pulls in nothing above.
"""
