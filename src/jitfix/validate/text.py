"""Validation results as terminal lines: one per function (coloured by outcome), the
evidence under ``--verbose``, and a summary; the same text in CI logs without colour."""

from __future__ import annotations

from typing import Iterator

from rich.text import Text

from jitfix import report
from jitfix.validate.runner import FunctionResult
from jitfix.validate.session import ValidationRun

STATUS_STYLES = {"passed": "green", "failed": "bold red", "skipped": "yellow"}


def validation_lines(validation: ValidationRun, record: str | None, quiet: bool, verbose: bool) -> Iterator[Text]:
    recording = validation.recording
    if recording is not None and not quiet:
        state = "timed out" if recording.returncode is None else f"exit code {recording.returncode}"
        yield Text(f"recorded {report.plural(recording.calls, 'call')} from `{record}` ({state})",
                   style="dim" if recording.returncode == 0 else "yellow")
        if verbose and recording.output.strip():
            yield Text(recording.output.rstrip(), style="dim")
    for module in validation.modules:
        if module.error:
            yield Text(f"{module.path}: ") + Text("validation could not run: ", style="bold red") + Text(module.error)
        for function in module.functions:
            if quiet and function.status != "failed":
                continue
            yield (Text(f"{module.path}:{function.line}: {function.function} ")
                   + Text(function.status, style=STATUS_STYLES[function.status])
                   + Text(f" ({function.outcome()})"))
            if verbose:
                yield from (Text(f"    {detail}", style="dim") for detail in _details(function))
        held = validation.held.get(module.path)
        if held:
            yield (Text(f"{module.path}: ") + Text("not written: ", style="bold red")
                   + Text(f"the rewrites of {', '.join(held)}, not proven by validation (the file's other "
                          "rewrites are; --allow-unvalidated also writes the ones that were skipped)"))
        if module.path in validation.held_files:
            yield (Text(f"{module.path}: ") + Text("not written: ", style="bold red")
                   + Text("its validation could not run (--allow-unvalidated writes it anyway)"))
        if verbose and module.output.strip():
            yield Text(f"{module.path}: output of your code during validation:\n{module.output.rstrip()}", style="dim")
    if not quiet:
        yield Text(f"Validation: {report.validation_summary(validation)}.", style="bold")


def _details(function: FunctionResult) -> list[str]:
    """The evidence behind one outcome: what the original did under jit, where the inputs came
    from, what they did not reach, and notes (gradients, dropped inputs)."""
    details = []
    if function.before:
        details.append(f"original under jit: {function.before}")
    if function.sources:
        details.append("inputs: " + ", ".join(f"{count} {source}" for source, count in function.sources.items() if count))
    if function.missed:
        details.append("not reached: " + ", ".join(function.missed))
    if function.failure and function.failure.get("expected"):
        details.append(f"expected: {function.failure['expected']}")
    return details + function.notes
