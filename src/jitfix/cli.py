"""The ``jitfix`` command line: fix, diff, check, rules, explain.

Exit codes: 0 clean / success; 1 findings remain (``check``; ``fix`` when something is
not auto-fixable; ``diff`` when it shows changes) or a validation failed; 2 usage error,
bad configuration, or a file that could not be read, parsed or written; 3 an internal error
of jitfix itself (a bug: reported with where it happened).
"""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass
from enum import Enum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Optional

import typer
from rich.console import Console
from rich.text import Text

from jitfix import __version__, report
from jitfix.cache import Cache
from jitfix.config import DEFAULT_VALIDATE_TIMEOUT, ConfigError, Settings, load_settings
from jitfix.engine import FileResult, Options, analyse, default_jobs, process_bytes, run_paths, unified_diff
from jitfix.files import InputError, discover, read_source, remove_stale_temporaries, write_source
from jitfix.findings import Finding
from jitfix.suppress import add_ignores

if TYPE_CHECKING:  # validation is loaded only when asked for
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
    "--validate, --record and `jitfix validate` import and run your code; nothing else does.",
    no_args_is_help=True,
    add_completion=False,
    context_settings={"help_option_names": ["-h", "--help"]},
    rich_markup_mode=None,
    pretty_exceptions_enable=False,
)


class ReportFormat(str, Enum):
    text = "text"
    json = "json"


class OutputFormat(str, Enum):
    text = "text"
    json = "json"
    github = "github"
    sarif = "sarif"
    markdown = "markdown"


def _codes(values: Optional[list[str]]) -> Optional[tuple[str, ...]]:
    if not values:
        return None
    codes = tuple(code.strip().upper() for value in values for code in value.split(",") if code.strip())
    for code in codes:
        if not code.startswith("JF"):
            raise typer.BadParameter(f"{code!r} is not a rule code or prefix (they start with JF)")
    return codes


def _version(value: bool) -> None:
    if value:
        typer.echo(f"jitfix {__version__}")
        raise typer.Exit()


Paths = Annotated[list[str], typer.Argument(help="Files or folders to process; - reads stdin.", show_default=False,
                                            metavar="PATH")]
Select = Annotated[Optional[list[str]], typer.Option("--select", metavar="CODES",
                                                     help="Only these rule codes or prefixes (JF4,JF401).")]
Ignore = Annotated[Optional[list[str]], typer.Option("--ignore", metavar="CODES",
                                                     help="Skip these rule codes or prefixes.")]
Jobs = Annotated[Optional[int], typer.Option("--jobs", "-j", min=1, metavar="N",
                                             help="Worker processes (default: all cores).")]
Quiet = Annotated[bool, typer.Option("--quiet", "-q", help="Print only errors (and requested output).")]
Verbose = Annotated[bool, typer.Option("--verbose", "-v", help="Say what happens to every file.")]
NoColor = Annotated[bool, typer.Option("--no-color", help="Never colour output (default: colour on terminals).")]
StdinName = Annotated[Optional[str], typer.Option("--stdin-filename", metavar="PATH", help="Name to report for code read from stdin.")]
UnsafeFixes = Annotated[bool, typer.Option("--unsafe-fixes", help="Also apply fixes marked unsafe.")]
Config = Annotated[Optional[Path], typer.Option("--config", metavar="PYPROJECT", help="Read [tool.jitfix] from this pyproject.toml.")]
NoCache = Annotated[bool, typer.Option("--no-cache", help="Process every file, ignoring and not updating .jitfix_cache/.")]
Exclude = Annotated[Optional[list[str]], typer.Option("--exclude", metavar="GLOB", help="Glob of paths to skip when walking folders.")]
Validate = Annotated[bool, typer.Option(
    "--validate", help="Run every rewritten function: the original eagerly (jax.disable_jit) and the rewrite "
    "under jax.jit, on the same inputs, and compare. IMPORTS AND RUNS YOUR CODE, one process per module. "
    "fix writes only the rewrites that pass.")]
Examples = Annotated[Optional[Path], typer.Option(
    "--examples", metavar="FILE", help="Inputs for --validate: a Python file defining "
    "EXAMPLES = {\"pkg.mod:function\": [((args...), {kwargs}), ...]}. Implies --validate.")]
Record = Annotated[Optional[str], typer.Option(
    "--record", metavar="COMMAND", help="Inputs for --validate: run COMMAND (e.g. \"pytest tests/\") and capture "
    "the arguments the rewritten functions are called with. Runs your code. Implies --validate.")]
ValidateTimeout = Annotated[Optional[float], typer.Option(
    "--validate-timeout", metavar="SECONDS", min=1, help=f"Time limit per module for --validate and --record "
    f"(default {DEFAULT_VALIDATE_TIMEOUT:g}).")]
PassEnv = Annotated[Optional[list[str]], typer.Option(
    "--pass-env", metavar="NAME", help="Pass this environment variable on to your code under --validate and "
    "--record (repeatable). Only what Python and JAX need is passed otherwise: secrets stay out.")]
AllowUnvalidated = Annotated[bool, typer.Option(
    "--allow-unvalidated", help="With --validate: also write rewrites whose validation was skipped or could "
    "not run (by default fix writes only what passed).")]
ReportFile = Annotated[Optional[Path], typer.Option(
    "--report", metavar="FILE", help="Write a migration report (markdown): every file, every rewrite with its "
    "rule and validation evidence, every finding left for a person.")]


@dataclass
class Run:
    """Everything a command needs, resolved from its options."""

    paths: list[str]
    settings: Settings
    jobs: Optional[int]
    quiet: bool
    verbose: bool
    out: Console
    err: Console
    stdin_name: Optional[str]
    use_cache: bool = True
    validation: Optional[ValidationOptions] = None  # set when asked to validate
    record: Optional[str] = None

    def ask_validation(self, validate: bool, examples: Optional[Path], record: Optional[str],
                       timeout: Optional[float], pass_env: Optional[list[str]] = None,
                       allow_unvalidated: bool = False) -> None:
        """--validate, or anything that implies it, with the configured defaults filled in."""
        settings = self.settings
        examples_file = str(examples) if examples else settings.validate_examples
        if examples_file and not Path(examples_file).is_file():
            self.err.print(f"jitfix: --examples: {examples_file}: no such file", style="red")
            raise typer.Exit(EXIT_ERROR)
        if not (validate or examples or record):
            return
        if timeout is not None and not 1 <= timeout < float("inf"):
            self.err.print("jitfix: --validate-timeout must be a number of seconds, at least 1", style="red")
            raise typer.Exit(EXIT_ERROR)
        self.record = record or settings.validate_record
        from jitfix.validate.runner import ValidationOptions

        self.validation = ValidationOptions(
            examples=examples_file, timeout=timeout or settings.validate_timeout or DEFAULT_VALIDATE_TIMEOUT,
            jobs=self.jobs or default_jobs(), pass_env=tuple(pass_env or ()), allow_unvalidated=allow_unvalidated)


def _consoles(no_color: bool) -> tuple[Console, Console]:
    # color_system=None drops every escape code (no_color alone would keep bold).
    common = dict(highlight=False, soft_wrap=True, emoji=False, markup=False)
    if no_color:
        common["color_system"] = None
    return Console(**common), Console(stderr=True, **common)


def _prepare(paths: list[str], select, ignore, exclude, jobs, quiet, verbose, no_color, stdin_name,
             config: Optional[Path]) -> Run:
    out, err = _consoles(no_color)
    start = config if config is not None else Path(next((p for p in paths if p != "-"), "."))
    try:
        if config is not None and not config.is_file():
            raise ConfigError(f"{config}: no such file")
        settings = load_settings(start if start.exists() else Path("."))
    except ConfigError as error:
        err.print(f"jitfix: configuration error: {error}", style="red")
        raise typer.Exit(EXIT_ERROR)
    settings = settings.with_overrides(select=_codes(select), ignore=_codes(ignore))
    if exclude:
        settings = settings.with_overrides(exclude=settings.exclude + tuple(exclude))
    return Run(paths, settings, jobs, quiet, verbose, out, err, stdin_name)


def _report_error(run: Run, error: InputError) -> None:
    run.err.print(Text("error: ", style="bold red") + Text(error.describe()))


@dataclass
class Results:
    files: list[FileResult]
    stdin: Optional[FileResult]  # code read from "-"
    missing: int  # paths that named nothing to process

    @property
    def all(self) -> list[FileResult]:
        return ([self.stdin] if self.stdin else []) + self.files

    @property
    def failed(self) -> int:
        return self.missing + sum(1 for r in self.all if r.error is not None or r.internal_error is not None)

    @property
    def error_exit(self) -> int:
        """3 when jitfix itself failed on a file (a bug), else 2 (input it could not take)."""
        return EXIT_INTERNAL if any(r.internal_error is not None for r in self.all) else EXIT_ERROR

    def findings(self) -> list[Finding]:
        return sorted((f for result in self.all for f in result.findings), key=Finding.sort_key)


def _results(run: Run, options: Options) -> Results:
    """Process every path; every error is reported and the other files still processed."""
    results: list[FileResult] = []
    files, errors = discover([p for p in run.paths if p != "-"], run.settings.exclude)
    for error in errors:
        _report_error(run, error)
    stdin = None
    if "-" in run.paths:
        stdin = process_bytes(run.stdin_name or "-", sys.stdin.buffer.read(), run.settings, options)
    show_progress = not run.quiet and run.err.is_terminal and len(files) >= PROGRESS_THRESHOLD
    # Next to the pyproject.toml that configures the run, else in the working folder.
    cache_root = str(Path(run.settings.config_path).parent) if run.settings.config_path else "."
    cache = Cache.at(cache_root, run.settings, options) if run.use_cache else None
    iterator = run_paths(files, run.settings, options, run.jobs, cache)
    if show_progress:
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

        with Progress(TextColumn("jitfix"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                      console=run.err, transient=True) as progress:
            task = progress.add_task("files", total=len(files))
            for result in iterator:
                results.append(result)
                progress.advance(task)
    else:
        results.extend(iterator)
    outcome = Results(results, stdin, len(errors))
    for result in outcome.all:
        if result.error is not None:
            _report_error(run, result.error)
        elif result.internal_error is not None:
            run.err.print(Text("internal error: ", style="bold red") + Text(
                f"{result.path}: {result.internal_error}; the file was left unchanged. Please report this."))
        elif run.verbose:
            state = "cached" if result.cached else "parsed" if result.parsed else "skipped (no jax)"
            run.err.print(f"{result.path}: {state}, {len(result.findings)} finding(s)", style="dim")
    return outcome


def _run_validation(run: Run, results: Results, options: Options) -> Optional[ValidationRun]:
    """With --validate: validate every changed file, holding back what fails (in ``results``)."""
    if run.validation is None:
        return None
    from jitfix.validate.session import validate_results

    validation = validate_results(results.files, run.settings, options, run.validation, run.record)
    _print_validation(run, validation, run.err)
    return validation


def _print_validation(run: Run, validation: ValidationRun, console: Console) -> None:
    from jitfix.validate.text import validation_lines

    for line in validation_lines(validation, run.record, quiet=run.quiet, verbose=run.verbose):
        console.print(line)


def _write_report(run: Run, path: Optional[Path], results: Results, validation: Optional[ValidationRun],
                  applied: bool) -> None:
    if path is None:
        return
    text = report.migration_report(results.all, results.findings(), validation, applied)
    try:
        path.write_text(text, encoding="utf-8")
    except OSError as error:
        run.err.print(f"jitfix: cannot write the report: {path}: {error.strerror}", style="red")
        raise typer.Exit(EXIT_ERROR)
    if not run.quiet:
        run.err.print(f"report written to {path}", style="dim")


@app.callback()
def _main(
    version: Annotated[bool, typer.Option("--version", callback=_version, is_eager=True,
                                          help="Show the version and exit.")] = False,
) -> None:
    """Rewrite Python/JAX code so it runs correctly under jax.jit."""


@app.command()
def check(
    paths: Paths,
    output_format: Annotated[OutputFormat, typer.Option("--output-format", help="How to print findings.")] = OutputFormat.text,
    statistics: Annotated[bool, typer.Option("--statistics", help="Print counts per rule instead of findings.")] = False,
    exit_zero: Annotated[bool, typer.Option("--exit-zero", help="Exit 0 even when findings exist.")] = False,
    add_ignore: Annotated[bool, typer.Option(
        "--add-ignore", help="Write a `# jitfix: ignore[CODE]` comment on every finding that is not auto-fixable, "
        "so the check can be turned on today and the list burnt down later.")] = False,
    select: Select = None, ignore: Ignore = None, exclude: Exclude = None, jobs: Jobs = None,
    quiet: Quiet = False, verbose: Verbose = False, no_color: NoColor = False,
    stdin_filename: StdinName = None, config: Config = None, no_cache: NoCache = False,
    validate: Validate = False, examples: Examples = None, record: Record = None,
    validate_timeout: ValidateTimeout = None, pass_env: PassEnv = None,
    allow_unvalidated: AllowUnvalidated = False, report_file: ReportFile = None,
) -> None:
    """Report findings without changing anything (for CI). Exit 1 when any exist."""
    run = _prepare(paths, select, ignore, exclude, jobs, quiet, verbose, no_color, stdin_filename, config)
    run.ask_validation(validate, examples, record, validate_timeout, pass_env, allow_unvalidated)
    run.use_cache = not no_cache
    wants_fixes = output_format in (OutputFormat.json, OutputFormat.sarif, OutputFormat.markdown)
    results = _results(run, Options(fix_diffs=wants_fixes))
    if add_ignore:
        _add_ignores(run, results)
    findings = results.findings()
    validation = None
    if run.validation is not None:
        fix_options = Options(apply_fixes=True)
        validation = _run_validation(run, _results(run, fix_options), fix_options)
    _write_report(run, report_file, results, validation, applied=False)
    if statistics:
        for line in report.statistics(findings):
            run.out.print(line)
    elif output_format is OutputFormat.json:
        run.out.print(report.to_json(findings, validation))
    elif output_format is OutputFormat.sarif:
        run.out.print(report.to_sarif(findings))
    elif output_format is OutputFormat.markdown:
        run.out.print(report.to_markdown(findings, validation), end="")
    elif output_format is OutputFormat.github:
        for finding in findings:
            run.out.print(report.github_line(finding))
    else:
        for finding in findings:
            run.out.print(report.text_line(finding))
        if not run.quiet:
            _check_summary(run, findings, results.failed)
    if results.failed:
        raise typer.Exit(results.error_exit)
    if validation is not None and validation.failed:
        raise typer.Exit(EXIT_FINDINGS)
    raise typer.Exit(EXIT_FINDINGS if findings and not exit_zero else EXIT_CLEAN)


def _add_ignores(run: Run, results: Results) -> None:
    """Suppress every finding without a fix in place; ``results`` keep only what is left."""
    added = files = 0
    for result in results.files:
        manual = [finding for finding in result.findings if finding.fix is None]
        if not manual:
            continue
        if result.path.endswith(".ipynb"):
            run.err.print(f"{result.path}: ignore comments are not added to notebooks; add them in the cells")
            continue
        try:
            result.source = result.source or read_source(result.path)  # workers do not send it back
        except InputError as error:
            _report_error(run, error)
            continue
        new_text, skipped = add_ignores(result.source.text, manual)
        try:
            after, _ = analyse(result.path, new_text, run.settings)
        except InputError:
            after = None
        if after is None or any(f.fix is None for f in after if f not in skipped and _same_place(f, manual)):
            run.err.print(f"{result.path}: could not add ignore comments; the file was left unchanged", style="red")
            continue
        try:
            write_source(result.source, new_text)
        except InputError as error:
            _report_error(run, error)
            continue
        added += len(manual) - len(skipped)
        files += 1
        result.findings = after
    if not run.quiet:
        run.err.print(f"added {report.plural(added, 'ignore comment')} in {report.plural(files, 'file')}")


def _same_place(finding: Finding, others: list[Finding]) -> bool:
    return any((finding.code, finding.line) == (other.code, other.line) for other in others)


def _check_summary(run: Run, findings: list[Finding], failed: int) -> None:
    """The last line of a text check. "All checks passed" only when every file was checked."""
    unchecked = f"; {report.plural(failed, 'file')} could not be checked (see above)" if failed else ""
    if not findings:
        if failed:
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
        line += f"; {report.plural(hidden, 'more fix')} with `jitfix fix --unsafe-fixes`"
    run.out.print(line + unchecked + ".", style="bold")


@app.command()
def fix(
    paths: Paths,
    unsafe_fixes: UnsafeFixes = False,
    select: Select = None, ignore: Ignore = None, exclude: Exclude = None, jobs: Jobs = None,
    quiet: Quiet = False, verbose: Verbose = False, no_color: NoColor = False,
    stdin_filename: StdinName = None, config: Config = None, no_cache: NoCache = False,
    validate: Validate = False, examples: Examples = None, record: Record = None,
    validate_timeout: ValidateTimeout = None, pass_env: PassEnv = None,
    allow_unvalidated: AllowUnvalidated = False, report_file: ReportFile = None,
) -> None:
    """Rewrite files in place (stdin to stdout for -). Exit 1 when findings are left or a
    validation failed."""
    run = _prepare(paths, select, ignore, exclude, jobs, quiet, verbose, no_color, stdin_filename, config)
    run.ask_validation(validate, examples, record, validate_timeout, pass_env, allow_unvalidated)
    run.use_cache = not no_cache
    options = Options(apply_fixes=True, unsafe_fixes=unsafe_fixes)
    results = _results(run, options)
    validation = _run_validation(run, results, options)
    stdin = results.stdin
    if stdin is not None and stdin.source is not None:
        sys.stdout.write(stdin.new_text if stdin.new_text is not None else stdin.source.text)
    fixed_files = write_failures = 0
    cleaned: set[Path] = set()
    for result in results.files:
        if not result.changed:
            continue
        folder = Path(result.path).resolve().parent
        if folder not in cleaned:
            remove_stale_temporaries(folder)
            cleaned.add(folder)
        try:
            write_source(result.source, result.new_text)
        except InputError as error:
            _report_error(run, error)
            write_failures += 1
            continue
        fixed_files += 1
        if not run.quiet:
            codes = ", ".join(sorted({finding.code for finding in result.fixed}))
            run.err.print(Text("fixed ", style="green") + Text(f"{result.path} ({report.plural(len(result.fixed), 'fix')}: {codes})"))
    left = results.findings()
    for finding in left:
        if not run.quiet:
            run.err.print(report.text_line(finding))
    failed = results.failed + write_failures
    if not run.quiet:
        summary = f"{report.plural(fixed_files, 'file')} fixed, {report.plural(len(left), 'finding')} left"
        if left:
            summary += f": {_left_kinds(left, validation is not None, options.unsafe_fixes)}"
        if failed:
            summary += f", {report.plural(failed, 'file')} failed"
        run.err.print(summary, style="bold")
    _write_report(run, report_file, results, validation, applied=True)
    if failed:
        raise typer.Exit(results.error_exit)
    raise typer.Exit(EXIT_FINDINGS if left or (validation and validation.failed) else EXIT_CLEAN)


def _left_kinds(left: list[Finding], validated: bool, unsafe_applied: bool) -> str:
    """What the findings a fix left are: no fix, an unsafe one not asked for, or a fix that
    was asked for and held back."""
    from jitfix.findings import Safety

    unsafe = 0 if unsafe_applied else sum(1 for f in left if f.fix is not None and f.fix.safety is not Safety.SAFE)
    held = sum(1 for f in left if f.fix is not None) - unsafe
    parts = [f"{len(left) - unsafe - held} not auto-fixable"] if len(left) - unsafe - held else []
    if unsafe:
        parts.append(f"{unsafe} with an unsafe fix (--unsafe-fixes)")
    if held:
        parts.append(f"{held} held back by validation" if validated else f"{held} whose fix was not applied")
    return ", ".join(parts)


@app.command()
def diff(
    paths: Paths,
    stat: Annotated[bool, typer.Option("--stat", help="Per-file counts of changed lines instead of the diff.")] = False,
    unsafe_fixes: UnsafeFixes = False,
    select: Select = None, ignore: Ignore = None, exclude: Exclude = None, jobs: Jobs = None,
    quiet: Quiet = False, verbose: Verbose = False, no_color: NoColor = False,
    stdin_filename: StdinName = None, config: Config = None, no_cache: NoCache = False,
    validate: Validate = False, examples: Examples = None, record: Record = None,
    validate_timeout: ValidateTimeout = None, pass_env: PassEnv = None,
    allow_unvalidated: AllowUnvalidated = False, report_file: ReportFile = None,
) -> None:
    """Show the fixes as a unified diff; write nothing. Exit 1 when there is a change."""
    run = _prepare(paths, select, ignore, exclude, jobs, quiet, verbose, no_color, stdin_filename, config)
    run.ask_validation(validate, examples, record, validate_timeout, pass_env, allow_unvalidated)
    run.use_cache = not no_cache
    options = Options(apply_fixes=True, unsafe_fixes=unsafe_fixes)
    results = _results(run, options)
    validation = _run_validation(run, results, options)
    changed = [result for result in results.all if result.changed]
    for result in changed:
        # A notebook reads best as its cells in Python on a terminal; redirected, the diff is
        # of the notebook's JSON, so that `git apply` takes the patch.
        review = result.review if run.out.is_terminal else None
        old, new = review or (result.source.text, result.new_text)
        patch = report.annotated_diff(unified_diff(result.path, old, new), [] if review else result.fixed)
        if stat:
            added = sum(1 for line in patch.split("\n") if line.startswith("+") and not line.startswith("+++"))
            removed = sum(1 for line in patch.split("\n") if line.startswith("-") and not line.startswith("---"))
            run.out.print(f"{result.path} | +{added} -{removed}")
        else:
            _print_diff(run, patch)
    if stat and changed:
        run.out.print(f"{report.plural(len(changed), 'file')} would be changed")
    left = results.findings()
    if not run.quiet:
        for finding in left:
            run.err.print(report.text_line(finding))
    _write_report(run, report_file, results, validation, applied=False)
    if results.failed:
        raise typer.Exit(results.error_exit)
    raise typer.Exit(EXIT_FINDINGS if changed or left or (validation and validation.failed) else EXIT_CLEAN)


def _print_diff(run: Run, patch: str) -> None:
    for line in patch.rstrip("\n").split("\n"):
        if line.startswith("@@"):
            header, _, label = line.partition(" @@")
            run.out.print(Text(header + " @@", style="cyan") + Text(label, style="yellow"))
            continue
        style = ""
        if line.startswith(("+++", "---")):
            style = "bold"
        elif line.startswith("+"):
            style = "green"
        elif line.startswith("-"):
            style = "red"
        run.out.print(Text(line, style=style))


@app.command("validate")
def validate_command(
    old: Annotated[Path, typer.Argument(help="The original module.", show_default=False, metavar="OLD")],
    new: Annotated[Path, typer.Argument(help="The rewritten module (by hand, by a colleague, by jitfix).",
                                        show_default=False, metavar="NEW")],
    output_format: Annotated[ReportFormat, typer.Option("--output-format", help="How to print results.")] = ReportFormat.text,
    examples: Examples = None, record: Record = None, validate_timeout: ValidateTimeout = None, pass_env: PassEnv = None,
    allow_unvalidated: AllowUnvalidated = False,
    quiet: Quiet = False, verbose: Verbose = False, no_color: NoColor = False, config: Config = None,
) -> None:
    """Compare two versions of a module: every function that differs runs as OLD eagerly and
    as NEW under jax.jit, on the same inputs. IMPORTS AND RUNS BOTH. Exit 1 when one fails."""
    run = _prepare([str(old)], None, None, None, None, quiet, verbose, no_color, None, config)
    run.ask_validation(True, examples, record, validate_timeout, pass_env, allow_unvalidated)
    texts = []
    for path in (old, new):
        try:
            texts.append(read_source(str(path)).text)
        except InputError as error:
            _report_error(run, error)
            raise typer.Exit(EXIT_ERROR)
    try:
        findings, _ = analyse(str(old), texts[0], run.settings)
    except InputError as error:
        _report_error(run, error)
        raise typer.Exit(EXIT_ERROR)
    from jitfix.validate.runner import ModuleJob

    job = ModuleJob(str(old), texts[0], texts[1], {finding.line: finding.code for finding in findings})
    from jitfix.validate.session import validate_jobs

    validation = validate_jobs([job], run.validation, run.record)
    if output_format is ReportFormat.json:
        run.out.print(json.dumps({"modules": [module.to_json() for module in validation.modules],
                                  "seconds": round(validation.seconds, 3)}, indent=2))
    else:
        _print_validation(run, validation, run.out)
        if not validation.modules[0].functions and not validation.modules[0].error and not run.quiet:
            run.out.print("No function differs between the two versions.")
    raise typer.Exit(EXIT_FINDINGS if validation.failed else EXIT_CLEAN)


@app.command()
def rules(
    output_format: Annotated[OutputFormat, typer.Option("--output-format", help="text or json.")] = OutputFormat.text,
) -> None:
    """List every rule: code, name, whether it is fixable, and what it finds."""
    from jitfix.rules import ALL_RULES

    if output_format is OutputFormat.json:
        typer.echo(json.dumps([{"code": r.code, "name": r.name, "fixable": r.fixable, "summary": r.summary}
                               for r in ALL_RULES], indent=2))
        return
    for rule in ALL_RULES:
        typer.echo(f"{rule.code}  {rule.name:<24} fixable: {rule.fixable:<9} {rule.summary}")


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

    try:
        typer.echo(explain_line(path, source.text, int(line_text)), nl=False)
    except SyntaxError as error:
        typer.echo(f"jitfix: {path}:{error.lineno}: syntax error: {error.msg}", err=True)
        raise typer.Exit(EXIT_ERROR)


@app.command()
def explain(code: Annotated[str, typer.Argument(help="A rule code, e.g. JF401.")]) -> None:
    """Print a rule's documentation."""
    from jitfix.rules import RULES_BY_CODE

    rule = RULES_BY_CODE.get(code.upper())
    if rule is None:
        typer.echo(f"jitfix: unknown rule {code!r}; `jitfix rules` lists them.", err=True)
        raise typer.Exit(EXIT_ERROR)
    doc = rule.doc
    sections = [
        f"{rule.code} ({rule.name})",
        f"Fixable: {rule.fixable}",
        f"## What it does\n{doc.what}",
        f"## Why it breaks under jit\n{doc.why}",
        f"## Example\n{_indent(doc.example)}",
        f"## Fixed\n{_indent(doc.fixed)}",
        f"## Fix safety\n{doc.safety}",
    ]
    typer.echo("\n\n".join(sections))


def _indent(code: str) -> str:
    return "\n".join(f"    {line}" if line else "" for line in code.rstrip("\n").splitlines())


def main() -> None:
    """The console script: an exception that escapes a command is jitfix's bug, reported in
    one line with exit 3 -- never a traceback that CI would read as "findings"."""
    from jitfix.engine import collect_garbage_rarely

    collect_garbage_rarely()
    try:
        app()
    except KeyboardInterrupt:
        sys.stderr.write("jitfix: interrupted\n")
        sys.exit(130)
    except Exception as error:  # noqa: BLE001
        from jitfix.engine import describe_exception

        sys.stderr.write(f"jitfix: internal error: {describe_exception(error)}. Please report this.\n")
        sys.exit(EXIT_INTERNAL)
