"""Every error agentcell raises, in one tree.

* AgentcellError                 base of everything below
  * TemplateSyntaxError          the template can never run; carries line and column; raised before any model call
    * UndefinedVariableError     `{{ name }}` names nothing in the namespace, `--context` or an earlier slot
  * TypeDefinitionError          a `--types` YAML file or a `types=` entry is no slot type; names file and line
  * TemplateRenderError          Jinja failed while a slot's prompt was rendered (e.g. `{{ 1 / 0 }}`)
  * ToolDefinitionError          a callable cannot be turned into a tool (bad signature, duplicate name)
  * ModelConfigError             a model string or provider cannot be resolved (e.g. a missing API key)
  * ProviderError                the provider refused a request (401, 400) or kept failing after retries
    * EmptyResponse              the server answered (HTTP 200) with nothing at all: no text, no tool call
  * RunError                     a run ended without completing; carries what it produced
    * Halted                     a `[[halt:…]]` guard tripped; `.result` holds only results from before it
    * BudgetExhausted            a slot hit its ceiling of requests, tool calls or tokens
  * ReplayDivergence             a `--replay` cassette does not match the run being replayed
  * ForkError                    a fork asks for a round, slot or tool call its run does not have
  * EventLoopRunning             a synchronous entry point was called inside a running event loop
  * NoEventLoop                  `show()` was called where no event loop runs (a plain script)

* JournalWarning (UserWarning)   a journal row could not be read and was left out; a batch manifest could not be opened

The magic converts these to a one-line `UsageError` at the boundary where a person watches; the
library raises them where the problem is found.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .result import RunResult


class AgentcellError(Exception):
    """Base class of every error agentcell raises on purpose."""


class TemplateSyntaxError(AgentcellError):
    """The template is malformed; nothing was sent to a model.

    `str()` gives `name:line:col: message` followed by the offending line and a caret under the
    column, so a beginner sees exactly where the cell is wrong.
    """

    def __init__(
        self, message: str, *, line: int, col: int, source: str | None = None, name: str = "<cell>"
    ) -> None:
        super().__init__(message)
        self.message = message
        self.line = line
        self.col = col
        self.source = source
        self.name = name

    def __str__(self) -> str:
        text = f"{self.name}, line {self.line}, column {self.col}: {self.message}"
        if self.source is not None:
            lines = self.source.splitlines()
            if 1 <= self.line <= len(lines):
                bad, col = _window(lines[self.line - 1], self.col)
                # Tabs are kept so the caret lines up under the same characters in a terminal.
                pad = "".join("\t" if ch == "\t" else " " for ch in bad[: max(col - 1, 0)])
                text += f"\n    {bad}\n    {pad}^"
        return text


SHOWN_LINE = 160
"""A longer source line is shown as this many characters around the column (a 5,000-character line
would bury the message)."""


def _window(line: str, col: int) -> tuple[str, int]:
    """`line` cut to `SHOWN_LINE` characters around `col` (marked `…` where cut), and the column in it."""
    if len(line) <= SHOWN_LINE:
        return line, col
    start = min(max(col - 1 - SHOWN_LINE // 2, 0), len(line) - SHOWN_LINE)
    shown = line[start : start + SHOWN_LINE]
    before, after = ("…" if start > 0 else ""), ("…" if start + SHOWN_LINE < len(line) else "")
    return f"{before}{shown}{after}", col - start + len(before)


class UndefinedVariableError(TemplateSyntaxError):
    """A `{{ name }}` refers to a variable nothing defines."""

    def __init__(
        self,
        message: str,
        *,
        variable: str,
        line: int,
        col: int,
        source: str | None = None,
        name: str = "<cell>",
    ) -> None:
        super().__init__(message, line=line, col=col, source=source, name=name)
        self.variable = variable


class TypeDefinitionError(AgentcellError):
    """A type definition (`--types FILE`, `types=`) is malformed; the message names the file, line and problem."""


class TemplateRenderError(AgentcellError):
    """Rendering a slot's prompt failed at run time (the Jinja expression itself raised)."""


class MediaError(AgentcellError):
    """A value handed to the model as an image, a document or audio cannot be sent: a file that is not what its
    name says, a size over the limit, a URL to a private address, a model that cannot read it."""


class ToolDefinitionError(AgentcellError):
    """A callable cannot be exposed as a tool."""


class McpServerError(AgentcellError):
    """An MCP server could not be started or used: the message names its command and its stderr's last lines."""


class ModelConfigError(AgentcellError):
    """The model cannot be resolved or its provider is not configured."""


class ProviderError(AgentcellError):
    """The model provider refused a request, or kept failing after every retry.

    The message names the status, the provider's own explanation (with any credential masked) and, for
    a rejected key, the environment variable to check. `.status` is the HTTP status when there was one.
    """

    def __init__(self, message: str, *, status: int | None = None, retryable: bool = False) -> None:
        super().__init__(message)
        self.status = status
        self.retryable = retryable


class EmptyResponse(ProviderError):
    """The server answered a request successfully but sent nothing in it: no text and no tool call.

    Not a refusal: llama.cpp's server, for one, sends HTTP 200 and then fails (a prompt past its context, a
    streamed tool call it cannot serve), so the client sees an empty stream. A slot asks again a few times
    or changes how it asks (`engine/answer_checks.py`); the message is the one sentence shown if it gives up.
    """


class RunError(AgentcellError):
    """A run ended without completing. `.result` keeps everything it produced."""

    def __init__(self, message: str, *, result: RunResult) -> None:
        super().__init__(message)
        self.result = result


class Halted(RunError):
    """A guard tripped. `.result.results` holds only values produced before the guard."""


class BudgetExhausted(RunError):
    """A slot reached its ceiling; the message names the limit and how to raise it."""


class ReplayDivergence(AgentcellError):
    """A replayed run asked for something the cassette does not hold."""


class EventLoopRunning(AgentcellError, RuntimeError):
    """`complete()` was called where an event loop is already running (Jupyter, async code).

    Nesting loops (nest_asyncio) loses widget messages in ipykernel 7, so agentcell refuses instead.
    """


class NoEventLoop(AgentcellError, RuntimeError):
    """`show()` was called where no event loop runs (a plain `python script.py`, a sync marimo script run).

    A live view needs a loop to run on between cells; a script has none, so agentcell says what to use
    instead of letting asyncio's own error surface.
    """


class JournalWarning(UserWarning):
    """`journal.load` left out rows it could not read (an event kind from a newer version, a corrupted line), or a
    batch's manifest could not be opened or read (its rows run, but `--resume` cannot know them)."""


class ForkError(AgentcellError):
    """`RunResult.fork` / `%agent fork` named a round, slot or tool call the run does not have; nothing ran."""
