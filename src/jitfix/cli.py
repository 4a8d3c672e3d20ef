"""The ``jitfix`` command line: check, fix, diff, validate, run, rules, why, explain, server.

Exit codes: 0 clean / success; 1 findings remain (``check``; ``fix`` when something is
not auto-fixable, or anything was fixed with ``--exit-non-zero-on-fix``; ``diff`` when it
shows changes) or a validation failed; 2 usage error, bad configuration, or a file that could
not be read, parsed or written; 3 an internal error of jitfix itself (a bug: reported with
where it happened).

What the commands do lives in :mod:`jitfix.api`; this module reads options and prints.
"""

from __future__ import annotations

import ast
import json
import os
import signal
import sys
from dataclasses import dataclass, fields
from enum import Enum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Optional, cast

import typer

from jitfix import __version__, api, report
from jitfix.cli_options import (
    PLATFORM_OPTION,
    CodeList,
    Paths,
    Shared,
    Validation,
    resolve_settings,
    use_platform,
    with_options,
)
from jitfix.config import DEFAULT_VALIDATE_TIMEOUT, Settings
from jitfix.pyproject import ConfigError, load_settings
from jitfix.engine import FileResult, Options, default_jobs, unified_diff
from jitfix.files import InputError, read_source
from jitfix.findings import Finding, Safety

if TYPE_CHECKING:  # validation is loaded only when asked for; rich, when something is printed
    from rich.console import Console
    from rich.text import Text

    from jitfix.validate.runner import ValidationOptions
    from jitfix.validate.session import ValidationRun

EXIT_CLEAN, EXIT_FINDINGS, EXIT_ERROR, EXIT_INTERNAL = 0, 1, 2, 3
PROGRESS_THRESHOLD = 50  # files; fewer finish before a bar would be worth drawing

app = typer.Typer(
    name="jitfix",
    help="Rewrite Python/JAX code so it runs correctly under jax.jit.\n\n"
    "  jitfix diff src/     show what would change (dry run)\n\n"
    "  jitfix fix src/      rewrite in place\n\n"
    "  jitfix check src/    report findings for CI (exit 1 when any)\n\n"
    "  jitfix fix --validate src/   also run each rewritten function before and after\n\n"
    "  jitfix run -- python train.py   fix what a run shows failing under jit, and rerun\n\n"
    "  jitfix server        the language server, for editors\n\n"
    "--validate, --record, `jitfix validate` and `jitfix run` import and run your code; nothing else does.",
    no_args_is_help=True,
    context_settings={"help_option_names": ["-h", "--help"]},
    rich_markup_mode=None,
    pretty_exceptions_enable=False,
)


class OutputFormat(str, Enum):
    text = "text"
    concise = "concise"
    full = "full"
    json = "json"
    json_lines = "json-lines"
    junit = "junit"
    gitlab = "gitlab"
    github = "github"
    sarif = "sarif"
    markdown = "markdown"


class ListFormat(str, Enum):
    text = "text"
    json = "json"


class ProfileFormat(str, Enum):
    text = "text"
    json = "json"
    markdown = "markdown"


# Formats whose output shows each finding's own fix.
SHOWS_FIXES = {OutputFormat.json, OutputFormat.json_lines, OutputFormat.sarif, OutputFormat.markdown,
               OutputFormat.full}


def _version(value: bool) -> None:
    if value:
        typer.echo(f"jitfix {__version__}")
        raise typer.Exit()


# -- a run: settings and consoles ---------------------------------------------------------------

@dataclass
class Run:
    """Everything a command needs, resolved from its options."""

    paths: list[str]
    settings: Settings
    shared: Shared
    out: Console
    err: Console
    validation: Optional[ValidationOptions] = None  # set when asked to validate
    record: Optional[str] = None

    @property
    def quiet(self) -> bool:
        return self.shared.quiet

    @property
    def verbose(self) -> bool:
        return self.shared.verbose

    def fail(self, message: str) -> None:
        self.err.print(f"jitfix: {message}", style="red")
        raise typer.Exit(EXIT_ERROR)

    def ask_validation(self, options: Validation, force: bool = False) -> None:
        """--validate, or anything that implies it, with the configured defaults filled in."""
        settings = self.settings
        examples_file = str(options.examples) if options.examples else settings.validate_examples
        if examples_file and not Path(examples_file).is_file():
            self.fail(f"--examples: {examples_file}: no such file")
        if not (options.asked or force):
            return
        timeout = options.validate_timeout
        if timeout is not None and not 1 <= timeout < float("inf"):
            self.fail("--validate-timeout must be a number of seconds, at least 1")
        self.record = options.record or settings.validate_record
        use_platform(options.platform)
        from jitfix.validate.runner import ValidationOptions

        self.validation = ValidationOptions(
            examples=examples_file, timeout=timeout or settings.validate_timeout or DEFAULT_VALIDATE_TIMEOUT,
            jobs=self.shared.jobs or default_jobs(), pass_env=tuple(options.pass_env or ()),
            allow_unvalidated=options.allow_unvalidated)


def _env_flag(name: str) -> bool:
    return bool(os.environ.get(name))  # set and not empty, as no-color.org and force-color.org say


class _LazyConsole:
    """A rich ``Console`` made on first use: importing rich is a third of the start-up of a
    run that prints nothing (a clean check, an editor checking one file)."""

    def __init__(self, **options: object):
        self._options = options
        self._console: Console | None = None

    @property
    def console(self) -> Console:
        if self._console is None:
            from rich.console import Console

            self._console = Console(**self._options)  # type: ignore[arg-type]
        return self._console

    def __getattr__(self, name: str):
        return getattr(self.console, name)


def _consoles(no_color: bool) -> tuple[Console, Console]:
    """Colour on terminals; never with --no-color or NO_COLOR (which win), always with
    FORCE_COLOR. color_system=None drops every escape code (rich's no_color keeps bold)."""
    common: dict = dict(highlight=False, soft_wrap=True, emoji=False, markup=False)
    if no_color or _env_flag("NO_COLOR"):
        common["color_system"] = None
    elif _env_flag("FORCE_COLOR"):
        common["force_terminal"] = True
    return cast("Console", _LazyConsole(**common)), cast("Console", _LazyConsole(stderr=True, **common))


def _real_console(console: Console) -> Console:
    """The rich console itself, for rich's own classes to hold."""
    return console.console if isinstance(console, _LazyConsole) else console


def _styled(text: str, style: str = "") -> Text:
    from rich.text import Text

    return Text(text, style=style)


def _prepare(paths: list[str] | None, shared: Shared) -> Run:
    """Settings and consoles; --show-settings and --show-files answer here and exit. No path
    means stdin when --stdin-filename names it, else the current folder, as for ruff."""
    paths = paths or (["-"] if shared.stdin_filename else ["."])
    out, err = _consoles(shared.no_color)
    try:
        settings = resolve_settings(paths, shared)
    except ConfigError as error:
        err.print(f"jitfix: configuration error: {error}", style="red")
        raise typer.Exit(EXIT_ERROR)
    run = Run(paths, settings, shared, out, err)
    if shared.show_settings:
        for line in _settings_lines(settings):
            out.print(line)
        raise typer.Exit(EXIT_CLEAN)
    if shared.show_files:
        files, errors = api.files_to_process(paths, settings)
        for path in files:
            out.print(path)
        for problem in errors:
            _report_error(run, problem)
        raise typer.Exit(EXIT_ERROR if errors else EXIT_CLEAN)
    return run


# Settings fields as [tool.jitfix] spells them, where the two differ.
CONFIG_KEYS = {"max_file_bytes": "max-file-size", "validate_examples": "validate.examples",
               "validate_record": "validate.record", "validate_timeout": "validate.timeout"}


def _settings_lines(settings: Settings) -> list[str]:
    lines = [f"# configuration: {settings.config_path or 'none found (defaults)'}"]
    for item in fields(settings):
        value = getattr(settings, item.name)
        if item.name == "config_path":
            continue
        if item.name == "target_version" and value is not None:
            value = f"py{value[0]}{value[1]}"
        if item.name == "per_file_ignores":
            value = {pattern: list(codes) for pattern, codes in value}
        elif isinstance(value, tuple):
            value = list(value)
        key = CONFIG_KEYS.get(item.name, item.name.replace("_", "-"))
        lines.append(f"{key} = {json.dumps(value)}" + ("  # the folder relative paths start from" if key == "root" else ""))
    return lines


def _report_error(run: Run, error: InputError) -> None:
    run.err.print(_styled("error: ", style="bold red") + _styled(error.describe()))


def _process(run: Run, options: Options) -> api.Results:
    """Process every path, with a progress bar on a terminal for long runs; every file's
    error is reported, and the other files still processed."""
    bar: dict = {}

    def started(count: int) -> None:
        if run.quiet or not run.err.is_terminal or count < PROGRESS_THRESHOLD:
            return
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

        bar["progress"] = Progress(TextColumn("jitfix"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                                   console=_real_console(run.err), transient=True)
        bar["task"] = bar["progress"].add_task("files", total=count)
        bar["progress"].start()

    def finished(result: FileResult) -> None:
        if bar:
            bar["progress"].advance(bar["task"])

    stdin = sys.stdin.buffer.read() if "-" in run.paths else None
    try:
        results = api.process(run.paths, run.settings, options, jobs=run.shared.jobs,
                              use_cache=not run.shared.no_cache, stdin=stdin,
                              stdin_name=run.shared.stdin_filename, started=started, finished=finished)
    finally:
        if bar:
            bar["progress"].stop()
    for error in results.unfound:
        _report_error(run, error)
    for result in results.all:
        if result.error is not None:
            _report_error(run, result.error)
        elif result.internal_error is not None:
            run.err.print(_styled("internal error: ", style="bold red") + _styled(
                f"{result.path}: {result.internal_error}; the file was left unchanged. Please report this."))
        elif run.verbose:
            run.err.print(f"{result.path}: {_what_happened(result, options)}", style="dim")
    return results


def _what_happened(result: FileResult, options: Options) -> str:
    state = "cached" if result.cached else "parsed" if result.parsed else "skipped (no jax)"
    if options.apply_fixes:
        return f"{state}, {report.plural(len(result.fixed), 'fix')}, {report.plural(len(result.findings), 'finding')} left"
    return f"{state}, {report.plural(len(result.findings), 'finding')}"


def _error_exit(results: api.Results) -> int:
    return EXIT_INTERNAL if results.internal_failure else EXIT_ERROR


def _run_validation(run: Run, results: api.Results, options: Options) -> Optional[ValidationRun]:
    """With --validate: validate every changed file, holding back what fails (in ``results``)."""
    if run.validation is None:
        return None
    validation = api.validate(results, run.settings, options, run.validation, run.record)
    _print_validation(run, validation, run.err)
    return validation


def _print_validation(run: Run, validation: ValidationRun, console: Console) -> None:
    from jitfix.validate.text import validation_lines

    for line in validation_lines(validation, run.record, quiet=run.quiet, verbose=run.verbose):
        console.print(line)


def _write_report(run: Run, path: Optional[Path], results: api.Results, validation: Optional[ValidationRun],
                  applied: bool) -> None:
    if path is None:
        return
    text = report.migration_report(results.all, results.findings(), validation, applied)
    try:
        path.write_text(text, encoding="utf-8")
    except OSError as error:
        run.fail(f"cannot write the report: {path}: {error.strerror}")
    if not run.quiet:
        run.err.print(f"report written to {path}", style="dim")


@app.callback()
def _main(
    version: Annotated[bool, typer.Option("--version", "-V", callback=_version, is_eager=True,
                                          help="Show the version and exit.")] = False,
) -> None:
    """Rewrite Python/JAX code so it runs correctly under jax.jit."""


# -- check --------------------------------------------------------------------------------------

@app.command()
@with_options(Shared, Validation)
def check(
    paths: Paths = None,
    *,
    shared: Shared,
    validation_options: Validation,
    output_format: Annotated[OutputFormat, typer.Option("--output-format", help="How to print findings.")] = OutputFormat.text,
    statistics: Annotated[bool, typer.Option(
        "--statistics", help="Print counts per rule instead of findings (as JSON with --output-format json).")] = False,
    exit_zero: Annotated[bool, typer.Option("--exit-zero", help="Exit 0 even when findings exist.")] = False,
    add_ignore: Annotated[bool, typer.Option(
        "--add-ignore", help="Write a `# jitfix: ignore[CODE]` comment on every finding that is not auto-fixable, "
        "so the check can be turned on today and the list burnt down later.")] = False,
    show_unknown: Annotated[bool, typer.Option(
        "--show-unknown", help="Also say, one line each, where Python needs a concrete value in traced code and "
        "the analysis cannot tell whether it is traced (not findings: no count or exit status changes).")] = False,
) -> None:
    """Report findings without changing anything (for CI). Exit 1 when any exist."""
    run = _prepare(paths, shared)
    run.ask_validation(validation_options)
    results = _process(run, Options(fix_diffs=output_format in SHOWS_FIXES))
    if add_ignore:
        added = api.add_ignore_comments(results, run.settings)
        for problem in added.problems:
            run.err.print(problem, style="red")
        if not run.quiet:
            run.err.print(f"added {report.plural(added.comments, 'ignore comment')} in "
                          f"{report.plural(added.files, 'file')}")
    findings = results.findings()
    validation = None
    if run.validation is not None:  # the fixes `fix` would make, proven; nothing written
        validation = api.validate_paths(run.paths, run.settings, run.validation, run.record, jobs=shared.jobs,
                                        use_cache=not shared.no_cache)
        _print_validation(run, validation, run.err)
    _write_report(run, validation_options.report_file, results, validation, applied=False)
    if statistics:
        _print_statistics(run, findings, output_format)
    else:
        _print_findings(run, findings, output_format, validation)
        if show_unknown and output_format in (OutputFormat.text, OutputFormat.concise, OutputFormat.full):
            _print_unknown(run, results.files)
        if output_format in (OutputFormat.text, OutputFormat.concise, OutputFormat.full) and not run.quiet:
            _check_summary(run, findings, results.failed - len(results.unfound), len(results.unfound))
    if results.failed:
        raise typer.Exit(_error_exit(results))
    if validation is not None and validation.failed:
        raise typer.Exit(EXIT_FINDINGS)
    raise typer.Exit(EXIT_FINDINGS if findings and not exit_zero else EXIT_CLEAN)


def _print_unknown(run: Run, files: list[FileResult]) -> None:
    """Where the analysis could not tell whether a value Python needs concretely is traced."""
    from jitfix.unknowns import unknown_sites

    for result in files:
        if result.error is not None or result.internal_error is not None or result.path.endswith(".ipynb"):
            continue
        try:
            text = Path(result.path).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            continue
        for site in unknown_sites(result.path, text, run.settings):
            run.out.print(site.text(), markup=False, highlight=False)


def _print_statistics(run: Run, findings: list[Finding], output_format: OutputFormat) -> None:
    if output_format in (OutputFormat.json, OutputFormat.json_lines):
        run.out.print(json.dumps(report.statistics(findings), indent=2))
        return
    if output_format not in (OutputFormat.text, OutputFormat.concise, OutputFormat.full):
        run.fail(f"--statistics prints text or json, not {output_format.value}")
    for line in report.statistics_lines(findings):
        run.out.print(line)


def _print_findings(run: Run, findings: list[Finding], output_format: OutputFormat,
                    validation: Optional[ValidationRun]) -> None:
    if output_format is OutputFormat.json:
        run.out.print(report.to_json(findings, validation))
    elif output_format is OutputFormat.json_lines:
        for line in report.to_json_lines(findings):
            run.out.print(line)
    elif output_format is OutputFormat.sarif:
        run.out.print(report.to_sarif(findings))
    elif output_format is OutputFormat.junit:
        run.out.print(report.to_junit(findings))
    elif output_format is OutputFormat.gitlab:
        run.out.print(report.to_gitlab(findings))
    elif output_format is OutputFormat.markdown:
        run.out.print(report.to_markdown(findings, validation), end="")
    elif output_format is OutputFormat.github:
        for finding in findings:
            run.out.print(report.github_line(finding))
    elif output_format is OutputFormat.full:
        sources: dict[str, list[str]] = {}
        for finding in findings:
            if finding.path not in sources:
                sources[finding.path] = _source_lines(finding.path)
            run.out.print(report.full_text(finding, sources[finding.path]))
    else:
        for finding in findings:
            run.out.print(report.text_line(finding))


def _source_lines(path: str) -> list[str]:
    try:
        return read_source(path).text.splitlines(keepends=True)
    except InputError:
        return []  # stdin, or gone since: the finding is shown without its source


def _unchecked(failed: int, unfound: int, failed_words: str) -> list[str]:
    """What went unchecked, for a summary: files that failed, and paths named that gave no
    file at all (missing, or a folder without Python files)."""
    return [f"{report.plural(failed, 'file')} {failed_words}"] * bool(failed) \
        + [f"{report.plural(unfound, 'path')} gave no file to check"] * bool(unfound)


def _check_summary(run: Run, findings: list[Finding], failed: int, unfound: int) -> None:
    """The last line of a text check. "All checks passed" only when every file was checked."""
    parts = _unchecked(failed, unfound, "could not be checked")
    unchecked = f"; {' and '.join(parts)} (see above)" if parts else ""
    if not findings:
        if parts:
            run.out.print(f"No findings{unchecked}.", style="bold")
        else:
            run.out.print("All checks passed.", style="green")
        return
    fixable = sum(1 for finding in findings if finding.fixable)
    hidden = sum(1 for finding in findings if finding.hidden_fix)
    line = f"Found {report.plural(len(findings), 'finding')}"
    if fixable:
        line += f"; {fixable} fixable with `jitfix fix`"
    if hidden:
        line += f"; {report.plural(hidden, 'hidden fix')} can be enabled with `--unsafe-fixes`"
    run.out.print(line + unchecked + ".", style="bold")


# -- fix ----------------------------------------------------------------------------------------

UnsafeFixes = Annotated[bool, typer.Option("--unsafe-fixes", help="Also apply fixes marked unsafe.")]


@app.command()
@with_options(Shared, Validation)
def fix(
    paths: Paths = None,
    *,
    shared: Shared,
    validation_options: Validation,
    unsafe_fixes: UnsafeFixes = False,
    show_fixes: Annotated[bool, typer.Option(
        "--show-fixes", help="List what was fixed, per file and rule.")] = False,
    exit_non_zero_on_fix: Annotated[bool, typer.Option(
        "--exit-non-zero-on-fix", help="Exit 1 when anything was fixed, even if nothing is left.")] = False,
) -> None:
    """Rewrite files in place (stdin to stdout for -). Exit 1 when findings are left or a
    validation failed."""
    run = _prepare(paths, shared)
    run.ask_validation(validation_options)
    options = Options(apply_fixes=True, unsafe_fixes=unsafe_fixes)
    results = _process(run, options)
    validation = _run_validation(run, results, options)
    stdin = results.stdin
    if stdin is not None and stdin.source is not None:
        sys.stdout.write(stdin.new_text if stdin.new_text is not None else stdin.source.text)
    written = api.write_fixes(results)
    for error in written.errors:
        _report_error(run, error)
    if not run.quiet:
        for result in written.files:
            codes = ", ".join(sorted({finding.code for finding in result.fixed}))
            run.err.print(_styled("fixed ", style="green") + _styled(
                f"{result.path} ({report.plural(len(result.fixed), 'fix')}: {codes})"))
    if show_fixes:
        _show_fixes(run, written.files + ([stdin] if stdin is not None and stdin.changed else []))
    left = results.findings()
    for finding in left:  # (--quiet too, as ruff's: a pre-commit hook that blocks says why)
        run.err.print(report.text_line(finding))
    failed = results.failed + len(written.errors)
    if not run.quiet:
        run.err.print(_fix_summary(len(written.files), left, failed - len(results.unfound), len(results.unfound),
                                   validation is not None, unsafe_fixes), style="bold")
    _write_report(run, validation_options.report_file, results, validation, applied=True)
    if failed:
        raise typer.Exit(_error_exit(results))
    fixed_any = bool(written.files) or (stdin is not None and stdin.changed)
    raise typer.Exit(EXIT_FINDINGS if left or (validation and validation.failed) or (exit_non_zero_on_fix and fixed_any)
                     else EXIT_CLEAN)


def _show_fixes(run: Run, fixed: list[FileResult]) -> None:
    """Per file, each rule and how many of its findings were fixed (ruff's --show-fixes)."""
    if not fixed:
        run.err.print("No fixes applied.")
        return
    total = sum(len(result.fixed) for result in fixed)
    run.err.print(f"Fixed {report.plural(total, 'finding')}:")
    for result in fixed:
        run.err.print(f"- {result.path}:")
        counts: dict[str, list[Finding]] = {}
        for finding in result.fixed:
            counts.setdefault(finding.code, []).append(finding)
        for code, found in sorted(counts.items()):
            run.err.print(f"    {len(found)} \u00d7 {code} ({found[0].name})")


def _fix_summary(fixed_files: int, left: list[Finding], failed: int, unfound: int, validated: bool,
                 unsafe_applied: bool) -> str:
    if not fixed_files and not left and not failed and not unfound:
        return "All checks passed."
    summary = f"{report.plural(fixed_files, 'file')} fixed, {report.plural(len(left), 'finding')} left"
    if left:
        summary += f": {_left_kinds(left, validated, unsafe_applied)}"
    return ", ".join([summary, *_unchecked(failed, unfound, "failed")])


def _left_kinds(left: list[Finding], validated: bool, unsafe_applied: bool) -> str:
    """What the findings a fix left are: no fix, an unsafe one not asked for, or a fix that
    was asked for and held back."""
    unsafe = 0 if unsafe_applied else sum(1 for f in left if f.fix is not None and f.fix.safety is not Safety.SAFE)
    held = sum(1 for f in left if f.fix is not None) - unsafe
    parts = [f"{len(left) - unsafe - held} not auto-fixable"] if len(left) - unsafe - held else []
    if unsafe:
        parts.append(f"{unsafe} with an unsafe fix (--unsafe-fixes)")
    if held:
        parts.append(f"{held} held back by validation" if validated else f"{held} whose fix was not applied")
    return ", ".join(parts)


# -- diff ---------------------------------------------------------------------------------------

@app.command()
@with_options(Shared, Validation)
def diff(
    paths: Paths = None,
    *,
    shared: Shared,
    validation_options: Validation,
    stat: Annotated[bool, typer.Option("--stat", help="Per-file counts of changed lines instead of the diff.")] = False,
    unsafe_fixes: UnsafeFixes = False,
) -> None:
    """Show the fixes as a unified diff; write nothing. Exit 1 when there is a change."""
    run = _prepare(paths, shared)
    run.ask_validation(validation_options)
    options = Options(apply_fixes=True, unsafe_fixes=unsafe_fixes)
    results = _process(run, options)
    validation = _run_validation(run, results, options)
    changed = results.changed()
    for result in changed:
        # A notebook reads best as its cells in Python on a terminal; redirected, the diff is
        # of the notebook's JSON, so that `git apply` takes the patch.
        review = result.review if run.out.is_terminal else None
        assert result.source is not None and result.new_text is not None  # it changed
        old, new = review or (result.source.text, result.new_text)
        patch = report.annotated_diff(unified_diff(result.path, old, new), [] if review else result.fixed)
        if stat:
            added, removed = api.diff_stat(patch)
            run.out.print(f"{result.path} | +{added} -{removed}")
        else:
            _print_diff(run, patch)
    if stat and changed:
        run.out.print(f"{report.plural(len(changed), 'file')} would be changed")
    left = results.findings_as_read()  # (the files are not changed: their lines as they are)
    for finding in left:  # (--quiet too, as ruff's: a pre-commit hook that blocks says why)
        run.err.print(report.text_line(finding))
    _write_report(run, validation_options.report_file, results, validation, applied=False)
    if results.failed:
        raise typer.Exit(_error_exit(results))
    raise typer.Exit(EXIT_FINDINGS if changed or left or (validation and validation.failed) else EXIT_CLEAN)


def _print_diff(run: Run, patch: str) -> None:
    for line in patch.rstrip("\n").split("\n"):
        if line.startswith("@@"):
            header, _, label = line.partition(" @@")
            run.out.print(_styled(header + " @@", style="cyan") + _styled(label, style="yellow"))
            continue
        style = ""
        if line.startswith(("+++", "---")):
            style = "bold"
        elif line.startswith("+"):
            style = "green"
        elif line.startswith("-"):
            style = "red"
        run.out.print(_styled(line, style=style))


# -- validate -----------------------------------------------------------------------------------

@app.command("validate")
def validate_command(
    old: Annotated[Path, typer.Argument(help="The original module.", show_default=False, metavar="OLD")],
    new: Annotated[Path, typer.Argument(help="The rewritten module (by hand, by a colleague, by jitfix).",
                                        show_default=False, metavar="NEW")],
    output_format: Annotated[ListFormat, typer.Option("--output-format", help="How to print results.")] = ListFormat.text,
    examples: Annotated[Optional[Path], typer.Option("--examples", metavar="FILE", help="Inputs: a Python file "
                                                     "defining EXAMPLES (see `jitfix fix --help`).")] = None,
    record: Annotated[Optional[str], typer.Option("--record", metavar="COMMAND",
                                                  help="Inputs: the calls COMMAND makes.")] = None,
    validate_timeout: Annotated[Optional[float], typer.Option("--validate-timeout", metavar="SECONDS", min=1,
                                                              help="Time limit for the module.")] = None,
    pass_env: Annotated[CodeList, typer.Option("--pass-env", metavar="NAME",
                                               help="Pass this environment variable on (repeatable).")] = None,
    platform: Annotated[Optional[str], PLATFORM_OPTION] = None,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="Print only failures.")] = False,
    verbose: Annotated[bool, typer.Option("--verbose", "-v", help="Print the evidence of each function.")] = False,
    no_color: Annotated[bool, typer.Option("--no-color", help="Never colour output.")] = False,
    config: Annotated[CodeList, typer.Option("--config", metavar="PYPROJECT|KEY=VALUE",
                                             help="As for check (repeatable).")] = None,
) -> None:
    """Compare two versions of a module: every function that differs runs as OLD eagerly and
    as NEW under jax.jit, on the same inputs. IMPORTS AND RUNS BOTH. Exit 1 when one fails,
    2 when either file cannot be read or parsed."""
    shared = Shared(quiet=quiet, verbose=verbose, no_color=no_color, config=config)
    run = _prepare([str(old)], shared)
    run.ask_validation(Validation(examples=examples, record=record, validate_timeout=validate_timeout,
                                  pass_env=pass_env, platform=platform), force=True)
    texts = []
    for path in (old, new):
        try:
            source = read_source(str(path))
            ast.parse(source.text, filename=str(path))
        except InputError as error:
            _report_error(run, error)
            raise typer.Exit(EXIT_ERROR)
        except (SyntaxError, ValueError) as error:
            where = f"{path}:{error.lineno}" if isinstance(error, SyntaxError) and error.lineno else str(path)
            message = error.msg if isinstance(error, SyntaxError) else str(error)
            _report_error(run, InputError(where, f"syntax error: {message}"))
            raise typer.Exit(EXIT_ERROR)
        texts.append(source.text)
    try:
        assert run.validation is not None  # the command always validates
        validation = api.validate_versions(str(old), texts[0], texts[1], run.settings, run.validation, run.record)
    except InputError as error:
        _report_error(run, error)
        raise typer.Exit(EXIT_ERROR)
    if output_format is ListFormat.json:
        run.out.print(json.dumps({"modules": [module.to_json() for module in validation.modules],
                                  "seconds": round(validation.seconds, 3)}, indent=2))
    else:
        _print_validation(run, validation, run.out)
        if not validation.modules[0].functions and not validation.modules[0].error and not run.quiet:
            run.out.print("No function differs between the two versions.")
    raise typer.Exit(EXIT_FINDINGS if validation.failed else EXIT_CLEAN)


# -- run ----------------------------------------------------------------------------------------

def _command_after_options(ctx: typer.Context, err, name: str) -> list[str]:
    """The command given after ``--``. The command's own options pass through unread, so an
    option jitfix does not know arrives first in it: no program is named ``-x``, so that is a
    mistyped option of jitfix's, said as such (not run as a program)."""
    command = list(ctx.args)
    if not command:
        err.print(f"jitfix: give the command after --, e.g. jitfix {name} -- python train.py")
        raise typer.Exit(EXIT_ERROR)
    if command[0].startswith("-"):
        err.print(f"jitfix {name}: no such option: {command[0]} (see jitfix {name} --help; the command goes "
                  "after --)", markup=False)
        raise typer.Exit(EXIT_ERROR)
    return command


@app.command(context_settings={"allow_extra_args": True, "ignore_unknown_options": True},
             options_metavar="[OPTIONS] -- COMMAND [ARGS]... | NOTEBOOK.ipynb")
def run(
    ctx: typer.Context,
    write: Annotated[bool, typer.Option("--write", help="Write the fixes to the project's files.")] = False,
    diff: Annotated[bool, typer.Option("--diff", help="Only show the diff: write nothing, ask nothing.")] = False,
    unsafe_fixes: Annotated[bool, typer.Option("--unsafe-fixes", help="Also apply fixes marked unsafe.")] = False,
    validate: Annotated[bool, typer.Option("--validate/--no-validate",
                                           help="Validate each rewritten function with the arguments recorded "
                                                "in an eager run (a file whose validation fails is not written).")]
    = True,
    max_rounds: Annotated[int, typer.Option("--max-rounds", min=1, help="Runs of the command at most.")] = 10,
    timeout: Annotated[float, typer.Option("--timeout", help="Seconds each run of the command may take.")] = 600.0,
    root: Annotated[Path, typer.Option("--root", help="The project folder: the command runs in (a copy of) it, "
                                                      "and only its files change.")] = Path("."),
    pass_env: Annotated[Optional[list[str]], typer.Option("--pass-env", metavar="NAME",
                                                          help="An environment variable the command needs.")] = None,
    platform: Annotated[Optional[str], PLATFORM_OPTION] = None,
    verbose: Annotated[bool, typer.Option("--verbose", "-v", help="Also say where the time went: each run of "
                                                                  "the command, fixing, validation.")] = False,
    no_color: Annotated[bool, typer.Option("--no-color", help="Never colour output.")] = False,
) -> None:
    """Run a command (`jitfix run -- python train.py`) or a notebook's cells (`jitfix run
    nb.ipynb`), fix the jit failures it shows, and run it again until it exits as it does
    with jit disabled. Runs your code; writes only with --write, or when you say yes."""
    from jitfix.pyproject import load_settings
    from jitfix.run import notebook_command, run_and_fix

    out, err = _consoles(no_color)
    use_platform(platform)
    command = _command_after_options(ctx, err, "run")
    if len(command) == 1 and command[0].endswith(".ipynb"):
        command = notebook_command(command[0])
    if not root.is_dir():
        err.print(f"jitfix: --root {root}: not a folder")
        raise typer.Exit(EXIT_ERROR)
    try:
        settings = load_settings(root)
    except ConfigError as error:
        err.print(f"jitfix: {error}")
        raise typer.Exit(EXIT_ERROR)
    result = run_and_fix(command, str(root), settings, max_rounds=max_rounds, timeout=timeout,
                         pass_env=tuple(pass_env or ()), unsafe_fixes=unsafe_fixes, validate=validate)
    err.print(f"reference (JAX_DISABLE_JIT=1): {_exit_status(result.reference, timeout)}")
    for current in result.rounds:
        err.print(f"round {current.number}: {_exit_status(current.returncode, timeout)}")
        for seen in current.failures:
            where = f"{_relative(seen.path, root)}:{current.places.get(seen, seen.line)}"
            done = ", ".join(sorted(set(current.fixed.get(_relative(seen.path, root), [])))) or "no fix"
            why = current.reasons.get(seen)
            held = f" ({', '.join(f'{name}: {kind}' for name, kind in seen.types)})" if seen.types else ""
            err.print(f"  {where} {seen.error} in {seen.function}{held} -> {done}" + (f": {why}" if why else ""),
                      markup=False)
        for difference in current.silent:
            done = ", ".join(sorted(set(current.fixed.get(difference.path, []))))
            err.print(f"  {difference.path}:{difference.line} `{difference.function}` computed otherwise under jit "
                      f"(it read {', '.join(f'`{cause.path}`' for cause in difference.causes)} as it was when traced) -> {done}",
                      markup=False)
    if result.refused:
        err.print(f"jitfix: {result.refused}; nothing fixed, nothing written", markup=False)
        raise typer.Exit(EXIT_ERROR)
    for relative, (old, new) in sorted(result.changed.items()):
        _print_diff(Run([], settings, Shared(), out, err), unified_diff(relative, old, new))
    _print_run_validation(result, err)
    verdict = ("exits as with jit disabled" if result.final == result.reference else
               "now succeeds (the original fails with jit disabled too)" if result.agrees else
               "still exits differently from the reference")
    held = f" ({len(result.held)} more held back by validation: not written)" if result.held else ""
    # Only what is written is "fixed"; without --write the fixes are a diff until confirmed.
    done = "fixed" if write and not diff or not result.writable else "fixable (the diff above; --write writes them)"
    err.print(f"{len(result.writable)} file(s) {done}{held}; the command {verdict} "
              f"({_exit_status(result.final, timeout)}).")
    printed = result.stdout_difference()
    if printed:
        err.print(f"its output differs from the run with jit disabled, first at {printed}", markup=False)
    for moved in result.moved:
        err.print(moved, markup=False)
    if result.silent:
        err.print(f"{len(result.silent)} jitted function(s) compute otherwise under jit, with nothing raised:")
        for difference in result.silent:
            err.print(f"  {difference.describe()}", markup=False)
    if result.unfixed:
        err.print(f"{len(result.unfixed)} failure(s) seen have no fix (see above)")
    if result.compiled:
        err.print("jitted functions in the last run (calls, compiles; see jitfix profile):")
        for function in result.compiled:
            causes = ", ".join(f"{cause} x{count}" for cause, count in function.causes().items())
            err.print(f"  {function.name} ({function.where}): {function.calls} calls, {function.compiles} compiles"
                      + (f"; recompiled because {causes}" if causes else "")
                      + (f"; given {function.arguments_shown()}" if function.arguments else ""), markup=False)
    if verbose:
        _print_phases(result.phases, err)
    if result.writable and not diff and (write or _confirmed(f"Write the fixes to {len(result.writable)} file(s)?")):
        _write_run_fixes(root, result.writable, err)
    raise typer.Exit(EXIT_CLEAN if result.agrees and not result.unfixed and not result.held and not result.silent
                     else EXIT_FINDINGS)


def _print_phases(phases: list[tuple[str, float]], err: Console) -> None:
    """Where the run's time went, phase by phase, and how much of it ran the command."""
    total = sum(seconds for _, seconds in phases)
    running = sum(seconds for what, seconds in phases if ": the command" in what)
    err.print(f"time: {total:.1f} s, {running:.1f} s of it running the command "
              f"({sum(': the command' in what for what, _ in phases)} runs)")
    for what, seconds in phases:
        err.print(f"  {seconds:6.2f} s  {what}", markup=False)


def _exit_status(returncode: int | None, timeout: float) -> str:
    return f"stopped after --timeout {timeout:g} s" if returncode is None else f"exit {returncode}"


def _print_run_validation(result, err: Console) -> None:
    """For each rewritten function: the failures its rewrite removed, and its validation."""
    if not result.validation and not result.held and not result.unvalidated:
        return
    on = f" on {result.backends}" if result.backends else ""
    err.print(f"validation{on} (the arguments of an eager run as inputs):")
    for relative, functions in sorted(result.validation.items()):
        if not functions and relative not in result.unvalidated and relative not in result.held:
            # JF501 and the like: the jit call changed, no function's body did.
            err.print(f"  {relative}: no function body was rewritten (only how it is jitted); the rerun is its proof",
                      markup=False)
        for function in functions:
            removed = ", ".join(result.removed_by(relative, function.function))
            err.print(f"  {relative}: {function.function} {function.summary()}"
                      + (f"; removed {removed}" if removed else ""), markup=False)
    for relative, why in sorted(result.unvalidated.items()):
        err.print(f"  {relative}: not validated ({why}); the rerun is its proof", markup=False)
    for relative, why in sorted(result.held.items()):
        err.print(f"  {relative}: not written: {why}", markup=False)


def _confirmed(question: str) -> bool:
    """A yes to ``question`` -- asked only when a person is at the terminal."""
    if not (sys.stdin.isatty() and sys.stdout.isatty()):
        return False
    return typer.confirm(question, default=False, err=True)


@app.command(context_settings={"allow_extra_args": True, "ignore_unknown_options": True},
             options_metavar="[OPTIONS] -- COMMAND [ARGS]...")
def profile(
    ctx: typer.Context,
    output_format: Annotated[ProfileFormat, typer.Option("--output-format", help="text, json or markdown.")]
    = ProfileFormat.text,
    report_file: Annotated[Optional[Path], typer.Option("--report", metavar="FILE",
                                                        help="Also write the markdown report to FILE.")] = None,
    chart: Annotated[Optional[Path], typer.Option("--chart", metavar="FILE",
                                                  help="Write an SVG chart of compiles over time to FILE.")] = None,
    timeout: Annotated[float, typer.Option("--timeout", help="Seconds the command may take.")] = 600.0,
    fix: Annotated[bool, typer.Option("--fix", help="Apply the fixes of the causes seen (a function jitted anew "
                                                    "in a loop is jitted once, a static argument that only enters "
                                                    "arithmetic is traced, a row-by-row function gets arguments "
                                                    "padded to a power-of-two length) to a copy, run the command "
                                                    "again there, and show the compiles before and after.")] = False,
    write: Annotated[bool, typer.Option("--write", help="With --fix: write the fixes to the files.")] = False,
    platform: Annotated[Optional[str], PLATFORM_OPTION] = None,
    no_color: Annotated[bool, typer.Option("--no-color", help="Never colour output.")] = False,
) -> None:
    """Run a command (`jitfix profile -- python train.py`) and show, per jitted function, its
    calls, its compiles and their time, and why each recompile happened, with the fix. Exit 1
    when a function recompiled for a cause it names (after --fix: still does), 2 when the
    command failed."""
    from jitfix.pyproject import load_settings
    from jitfix.profile import markdown_report, profile_and_fix, profile_command, svg_chart, text_report

    out, err = _consoles(no_color)
    use_platform(platform)
    command = _command_after_options(ctx, err, "profile")
    fixed = None
    if fix:
        try:
            settings = load_settings(Path("."))
        except ConfigError as error:
            err.print(f"jitfix: {error}")
            raise typer.Exit(EXIT_ERROR)
        fixed = profile_and_fix(command, settings, timeout=timeout)
        result = fixed.before
    else:
        result = profile_command(command, timeout=timeout)
    if output_format is ProfileFormat.json:
        shown = result.as_json()
        if fixed is not None:  # one JSON document: the profile, and what the fixes did
            shown["fixes"] = fixed.as_json()
        out.print_json(json.dumps(shown))
    elif output_format is ProfileFormat.markdown:
        out.print(markdown_report(result), markup=False, highlight=False)
    else:
        out.print(text_report(result), markup=False, highlight=False)
    if report_file is not None:
        report_file.write_text(markdown_report(result), encoding="utf-8")
    if chart is not None:
        chart.write_text(svg_chart(result), encoding="utf-8")
    if result.returncode != 0:
        tail = result.output.strip().splitlines()[-1:] or ["(no output)"]
        err.print(f"jitfix: the command exited {result.returncode}: {tail[0]}", markup=False)
        raise typer.Exit(EXIT_ERROR)
    if fixed is not None:
        # In JSON the diff is part of the document; markdown is a report of the profile alone.
        result = _report_profile_fixes(fixed, write, out if output_format is ProfileFormat.text else None, err)
    recompiled = any(f.suggestions() for f in result.functions)
    raise typer.Exit(EXIT_FINDINGS if recompiled else EXIT_CLEAN)


def _report_profile_fixes(fixed, write: bool, out: Console | None, err: Console):
    """The diff of the fixes (on ``out``, if given) and the compiles before and after them;
    the profile that stands."""
    if not fixed.changed or fixed.after is None:
        err.print("No fix for the causes seen (see the suggestions above).")
        return fixed.before
    if out is not None:
        run = Run([], Settings(), Shared(), out, err)
        for relative, (old, new) in sorted(fixed.changed.items()):
            _print_diff(run, unified_diff(relative, old, new))
    err.print("compiles before -> after the fixes:")
    for name, before, after in fixed.compiles():
        err.print(f"  {name}: {before} -> {after if after is not None else 'not called'}", markup=False)
    if fixed.after.returncode != 0:
        err.print(f"jitfix: with the fixes the command exited {fixed.after.returncode}; nothing written")
        return fixed.before
    difference = fixed.output_difference()
    if difference is not None:
        err.print(f"jitfix: with the fixes the command printed otherwise ({difference}); nothing written",
                  markup=False)
        return fixed.before
    err.print("the command printed the same with the fixes")
    if write:
        _write_run_fixes(Path("."), fixed.changed, err)
    return fixed.after


def _relative(path: str, root: Path) -> str:
    """A scratch path as the project's relative path (the copy keeps the folder's layout)."""
    parts = Path(path).parts
    name = root.resolve().name
    return str(Path(*parts[parts.index(name) + 1:])) if name in parts else Path(path).name


def _write_run_fixes(root: Path, changed: dict[str, tuple[str, str]], err: Console) -> None:
    """Each fixed file written atomically in its own encoding, unless it changed meanwhile."""
    from jitfix.files import write_source

    for relative, (old, new) in sorted(changed.items()):
        path = root / relative
        try:
            source = read_source(str(path))
            if source.text != old:
                err.print(f"jitfix: {path}: changed since the run read it; not written")
                continue
            write_source(source, new)
            err.print(f"wrote {path}")
        except InputError as error:
            err.print(f"jitfix: {error.describe()}")


# -- rules, why, explain ------------------------------------------------------------------------

@app.command()
def rules(
    output_format: Annotated[ListFormat, typer.Option("--output-format", help="text or json.")] = ListFormat.text,
) -> None:
    """List every rule: code, name, whether it is fixable, and what it finds."""
    from jitfix.rules import ALL_RULES

    if output_format is ListFormat.json:
        typer.echo(json.dumps([{"code": r.code, "name": r.name, "fixable": r.fixable, "summary": r.summary}
                               for r in ALL_RULES], indent=2))
        return
    width = max(len(rule.name) for rule in ALL_RULES)
    for rule in ALL_RULES:
        typer.echo(f"{rule.code}  {rule.name:<{width}}  fixable: {rule.fixable:<9}  {rule.summary}")


@app.command()
def why(
    location: Annotated[str, typer.Argument(metavar="FILE:LINE", help="A line of a module, e.g. train.py:42.")],
) -> None:
    """Show why jitfix thinks the values on a line are traced, static or unknown: the
    function's transform, each parameter's kind, and the evidence chain of each value."""
    path, _, line_text = location.rpartition(":")
    if not path or not line_text.isdigit():
        typer.echo(f"jitfix: expected FILE:LINE, got {location!r}", err=True)
        raise typer.Exit(EXIT_ERROR)
    try:
        source = read_source(path)
    except InputError as error:
        typer.echo(f"jitfix: {error.describe()}", err=True)
        raise typer.Exit(EXIT_ERROR)
    from jitfix.why import explain as explain_line

    project, evidence = _callers_evidence(path)
    try:
        typer.echo(explain_line(path, source.text, int(line_text), project, evidence), nl=False)
    except SyntaxError as error:
        typer.echo(f"jitfix: {path}:{error.lineno}: syntax error: {error.msg}", err=True)
        raise typer.Exit(EXIT_ERROR)


def _callers_evidence(path: str):
    """The project a check of the file's folder reads (``why.project_folder``) and what its
    other modules' traced code passes into this file: `why` then answers as `check` does for
    a function only another module's jitted code calls."""
    from jitfix.analysis.project import Project
    from jitfix.engine import Options
    from jitfix.paths import real_path
    from jitfix.why import project_folder

    folder = project_folder(path)
    try:
        settings = load_settings(folder)
    except ConfigError:
        return None, []
    files, _ = api.files_to_process([str(folder)], settings)
    real = real_path(path)
    if len(files) < 2 or real not in {real_path(file) for file in files}:
        return None, []
    results = api.process(files, settings, Options())
    evidence = [seen for result in results.all for seen in result.calls_out if seen.path == real]
    return Project(files, settings.max_file_bytes), evidence


@app.command()
def explain(
    rule_name: Annotated[str, typer.Argument(metavar="RULE", help="A rule's code or name: JF401, print-in-traced-code.")],
    output_format: Annotated[ListFormat, typer.Option("--output-format", help="text or json.")] = ListFormat.text,
) -> None:
    """Print a rule's documentation."""
    from jitfix.rules import find_rule

    rule = find_rule(rule_name)
    if rule is None:
        from jitfix.rules import ALL_RULES, nearest

        near = nearest(rule_name, [r.code for r in ALL_RULES] + [r.name for r in ALL_RULES])
        hint = f" Did you mean {' or '.join(near)}?" if near else " `jitfix rules` lists them."
        typer.echo(f"jitfix: unknown rule {rule_name!r}.{hint}", err=True)
        raise typer.Exit(EXIT_ERROR)
    if output_format is ListFormat.json:
        typer.echo(json.dumps({"code": rule.code, "name": rule.name, "fixable": rule.fixable, "summary": rule.summary,
                               "what": rule.doc.what, "why": rule.doc.why, "example": rule.doc.example,
                               "fixed": rule.doc.fixed, "safety": rule.doc.safety}, indent=2))
        return
    typer.echo(rule.explanation())


# -- server -------------------------------------------------------------------------------------

@app.command()
def server() -> None:
    """Run the language server on stdin/stdout (for editors: diagnostics, quick fixes, fix
    all, hover). Settings come from [tool.jitfix] and the client's initializationOptions."""
    from jitfix.server import serve

    serve()


def _terminated(signum: int, frame: object) -> None:
    """SIGTERM ends the run as Ctrl-C does -- workers stopped, temporary files removed, nothing
    half-written (every write is a rename) -- with the shell's exit status for it."""
    sys.stderr.write("jitfix: terminated\n")
    raise SystemExit(128 + signum)


def main() -> None:
    """The console script: an exception that escapes a command is jitfix's bug, reported in
    one line with exit 3 -- never a traceback that CI would read as "findings"."""
    from jitfix.engine import collect_garbage_rarely

    collect_garbage_rarely()
    signal.signal(signal.SIGTERM, _terminated)
    try:
        app()
    except KeyboardInterrupt:
        sys.stderr.write("jitfix: interrupted\n")
        sys.exit(130)
    except Exception as error:  # noqa: BLE001
        from jitfix.engine import describe_exception

        sys.stderr.write(f"jitfix: internal error: {describe_exception(error)}. Please report this.\n")
        sys.exit(EXIT_INTERNAL)
    finally:  # interrupted or terminated: no run of the user's code outlives jitfix (or holds a device)
        from jitfix.validate.process import stop_all

        stop_all()
