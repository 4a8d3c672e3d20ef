"""What a block of statements reads and writes, and what it does that a function body cannot.

Turning the branches of an ``if`` (or the body of a loop) into functions needs to know:
which names a branch binds, which it reads before it has certainly bound them (those
must be passed in), which it certainly binds on every path, whether every path returns,
and whether it holds something a branch function cannot hold (``yield``, ``global``,
``raise``, a write into an outer object).
"""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING, Callable, Iterable, Iterator, Sequence, TypeVar

from jitfix.analysis.catalogue import FRESH_OBJECTS, MUTATING_METHODS, VALUE_RETURNING_MUTATORS, is_range

if TYPE_CHECKING:
    from jitfix.analysis.imports import ImportTable

NESTED_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)
FunctionNode = ast.FunctionDef | ast.AsyncFunctionDef


T = TypeVar("T")


def kept_on_node(node: ast.AST, key: str, compute: Callable[[], T]) -> T:
    """``compute()``, worked out once per node and kept on it: a tree is never changed once
    parsed (a rewrite is made on the text, then parsed anew), so what is found in a node
    stays true, and the analysis asks the same of a statement many times (each ``if`` or
    loop planned asks what the code around it binds and reads)."""
    attribute = "_jitfix_" + key
    try:
        return node.__dict__[attribute]
    except KeyError:
        value = node.__dict__[attribute] = compute()
        return value


def nodes_of(node: ast.AST) -> list[ast.AST]:
    """Every node under ``node``, itself first, in ``ast.walk``'s order: kept on the node, for
    a function that a dozen rules each walk whole."""
    return kept_on_node(node, "all_nodes", lambda: list(ast.walk(node)))


def parents_in(node: ast.AST) -> dict[int, ast.AST]:
    """The parent of each node under ``node`` (by ``id``), kept on the node."""
    return kept_on_node(node, "parents", lambda: {
        id(child): parent for parent in nodes_of(node) for child in ast.iter_child_nodes(parent)})


def walk_body(function: ast.FunctionDef | ast.AsyncFunctionDef) -> Sequence[ast.AST]:
    """Every node of a function's own body, in source order, not descending into nested defs
    and classes (those are checked as functions of their own when they are traced). Kept on
    the node, as ``_own_body`` is: every rule walks it."""
    return kept_on_node(function, "body_nodes", lambda: [node for node, _ in _own_body(function)])


def own_expressions(function: ast.FunctionDef | ast.AsyncFunctionDef) -> Iterator[tuple[ast.AST, ast.stmt]]:
    """(expression node, innermost statement holding it) for the function's own body: the
    expressions of an ``except`` clause or a ``case`` belong to the ``try`` or ``match``."""
    return ((node, statement) for node, statement in _own_body(function)
            if not isinstance(node, _NOT_EXPRESSIONS))


def statement_holding(function: ast.FunctionDef | ast.AsyncFunctionDef, node: ast.AST) -> ast.stmt | None:
    """The innermost statement of the function's own body holding the expression ``node``."""
    return next((statement for child, statement in _own_body(function) if child is node), None)


_NOT_EXPRESSIONS = (ast.stmt, ast.excepthandler, ast.match_case, ast.withitem, ast.pattern)


def _own_body(function: ast.FunctionDef | ast.AsyncFunctionDef) -> list[tuple[ast.AST, ast.stmt]]:
    """(node, innermost statement) of every node of the function's own body, in source order.

    Every rule walks the bodies of the traced functions, several times: the walk is done
    once per function."""
    return kept_on_node(function, "own_nodes", lambda: _walk_own_body(function))


def _walk_own_body(function: ast.FunctionDef | ast.AsyncFunctionDef) -> list[tuple[ast.AST, ast.stmt]]:
    nodes = []
    stack: list[tuple[ast.AST, ast.stmt]] = [(statement, statement) for statement in reversed(function.body)]
    while stack:
        node, statement = stack.pop()
        nodes.append((node, statement))
        if isinstance(node, NESTED_SCOPES):
            continue
        if isinstance(node, ast.stmt):
            statement = node
        stack.extend((child, child if isinstance(child, ast.stmt) else statement)
                     for child in reversed(child_nodes(node)))
    return nodes


# Nodes no walk of a body needs to look inside, and fields that never hold a node.
_LEAVES = frozenset({ast.Name, ast.Constant, ast.Load, ast.Store, ast.Del, ast.alias, ast.Pass, ast.Break,
                     ast.Continue, *ast.operator.__subclasses__(), *ast.unaryop.__subclasses__(),
                     *ast.cmpop.__subclasses__(), *ast.boolop.__subclasses__()})
_PLAIN_FIELDS = frozenset({"ctx", "op", "ops", "id", "attr", "name", "arg", "asname", "module", "level", "kind",
                           "type_comment", "conversion", "is_async", "simple", "value_kind"})
_NODE_FIELDS: dict[type, tuple[str, ...]] = {}


def child_nodes(node: ast.AST) -> list[ast.AST]:
    """The node's children, in source order: ``ast.iter_child_nodes`` at a fraction of the
    cost (the fields to read are found once per node type)."""
    kind = type(node)
    fields = _NODE_FIELDS.get(kind)
    if fields is None:
        fields = _NODE_FIELDS[kind] = tuple(name for name in kind._fields if name not in _PLAIN_FIELDS)
    children: list[ast.AST] = []
    for attribute in fields:
        value = getattr(node, attribute, None)
        if type(value) is list:
            children.extend(item for item in value if isinstance(item, ast.AST))
        elif isinstance(value, ast.AST):
            children.append(value)
    return children


def walk_tree(root: ast.AST) -> Iterator[ast.AST]:
    """``root`` and every node under it, in source order: ``ast.walk`` at a fraction of the
    cost, without the context and operator nodes (``Load``, ``Add``) no search looks for."""
    stack = [root]
    while stack:
        node = stack.pop()
        yield node
        stack.extend(reversed(child_nodes(node)))


def non_leaf_children(node: ast.AST) -> list[ast.AST]:
    """The children worth visiting for a walk that looks for calls, defs and statements:
    names, constants and operators left out."""
    return [child for child in child_nodes(node) if type(child) not in _LEAVES]


def own_nodes(statements: Iterable[ast.AST]) -> Iterator[ast.AST]:
    """Every node of the statements, without the bodies of nested functions and classes
    (their names and decorators, defaults and bases are still visited)."""
    stack = list(statements)[::-1]
    while stack:
        node = stack.pop()
        yield node
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            stack.extend(reversed([*node.decorator_list, *node.args.defaults,
                                   *[d for d in node.args.kw_defaults if d is not None]]))
        elif isinstance(node, ast.ClassDef):
            stack.extend(reversed([*node.decorator_list, *node.bases, *node.keywords]))
        elif isinstance(node, ast.Lambda):
            stack.extend(reversed(node.args.defaults))
        else:
            stack.extend(reversed(child_nodes(node)))


def nodes_seeing(statements: Iterable[ast.AST], name: str) -> Iterator[ast.AST]:
    """Every node of the statements where ``name`` is the variable of the scope they are in:
    their own nodes, and those of the defs and lambdas nested in them for which ``name`` is
    free (one that binds ``name`` itself has its own)."""
    for node in own_nodes(statements):
        yield node
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda) \
                and name in free_names_when_called(node):
            yield from nodes_seeing([node.body] if isinstance(node, ast.Lambda) else node.body, name)


def target_names(target: ast.AST) -> list[str]:
    if isinstance(target, ast.Name):
        return [target.id]
    if isinstance(target, ast.Tuple | ast.List):
        return [name for element in target.elts for name in target_names(element)]
    if isinstance(target, ast.Starred):
        return target_names(target.value)
    return []


def assigned_names(statements: Iterable[ast.AST]) -> set[str]:
    """Every name the statements bind, on any path."""
    names: set[str] = set()
    for statement in statements:
        names |= kept_on_node(statement, "assigned_names", lambda: _assigned_in(statement))
    return names


def _assigned_in(statement: ast.AST) -> frozenset[str]:
    names: set[str] = set()
    for node in own_nodes([statement]):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store | ast.Del):
            names.add(node.id)
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names.add(node.name)
        elif isinstance(node, ast.Import | ast.ImportFrom):
            names.update((alias.asname or alias.name).split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ExceptHandler) and node.name:
            names.add(node.name)
    return frozenset(names)


def loaded_names(nodes: Iterable[ast.AST]) -> set[str]:
    """Every name read, nested functions included (they read their closure); ``c += 1``
    reads ``c`` too, though its target is a store."""
    names: set[str] = set()
    for root in nodes:
        names |= kept_on_node(root, "loaded_names", lambda: _loaded_in(root))
    return names


def _loaded_in(root: ast.AST) -> frozenset[str]:
    names: set[str] = set()
    for node in walk_tree(root):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load):
            names.add(node.id)
        elif isinstance(node, ast.AugAssign) and isinstance(node.target, ast.Name):
            names.add(node.target.id)
    return frozenset(names)


def scope_reads(nodes: Iterable[ast.AST]) -> set[str]:
    """The names the nodes read from the scope they are in: as ``loaded_names``, but a
    nested function, lambda or comprehension reads only its free names from it (its
    parameters, its loop variables and what it binds itself are its own)."""
    names: set[str] = set()
    for root in nodes:
        names |= kept_on_node(root, "scope_reads", lambda: _scope_reads_of(root))
    return names


def _scope_reads_of(root: ast.AST) -> frozenset[str]:
    names: set[str] = set()
    stack = [root]
    while stack:
        node = stack.pop()
        if isinstance(node, _NESTED_SCOPES):
            names |= _free_names(node)
            continue
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load):
            names.add(node.id)
        elif isinstance(node, ast.AugAssign) and isinstance(node.target, ast.Name):
            names.add(node.target.id)
        stack.extend(child_nodes(node))
    return frozenset(names)


_NESTED_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ListComp, ast.SetComp, ast.DictComp,
                  ast.GeneratorExp)


def _free_names(node: ast.AST) -> set[str]:
    """What a nested scope reads from the scopes around it: at its definition, a def's
    decorators, defaults and annotations and a comprehension's first iterable; when it runs,
    what its body reads that it does not bind (``nonlocal``/``global`` names are not its own)."""
    if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda):
        defined = [default for default in [*node.args.defaults, *node.args.kw_defaults] if default is not None]
        if not isinstance(node, ast.Lambda):
            defined += [*node.decorator_list, *[arg.annotation for arg in ast.walk(node.args)
                                                if isinstance(arg, ast.arg) and arg.annotation is not None]]
            defined += [node.returns] if node.returns is not None else []
        return scope_reads(defined) | free_names_when_called(node)
    assert isinstance(node, ast.ListComp | ast.SetComp | ast.DictComp | ast.GeneratorExp)
    first, *rest = node.generators
    own = {name for generator in node.generators for name in target_names(generator.target)}
    inner: list[ast.AST] = [first.target, *first.ifs, *[part for generator in rest for part in
                                                      (generator.iter, *generator.ifs)]]
    inner += [node.key, node.value] if isinstance(node, ast.DictComp) else [node.elt]
    named = {child.target.id for child in ast.walk(node) if isinstance(child, ast.NamedExpr)
             and isinstance(child.target, ast.Name)}  # `:=` in a comprehension binds in the scope around it
    return scope_reads([first.iter]) | (scope_reads(inner) - (own - named))


def free_names_when_called(function: ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda) -> set[str]:
    """What a def's or lambda's body reads from the scopes around it when it runs: what it
    reads and does not bind itself (``nonlocal``/``global`` names are not its own), its
    nested functions' free names included, their own locals not."""
    return set(kept_on_node(function, "free_names_when_called", lambda: _free_when_called(function)))


def _free_when_called(function: ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda) -> frozenset[str]:
    body: list[ast.AST] = [function.body] if isinstance(function, ast.Lambda) else list(function.body)
    declared = {name for child in own_nodes(body) if isinstance(child, ast.Nonlocal | ast.Global)
                for name in child.names}
    own = (_parameters(function) | assigned_names(body)) - declared
    return frozenset(scope_reads(body) - own)


def _exposed_by(statement: ast.stmt, live_out: set[str]) -> set[str]:
    """Names one statement may read before binding them (a loop body reading its own
    target does not count; a nested function reads only its free names, when called)."""
    if isinstance(statement, ast.If):
        return (loaded_names([statement.test]) | upward_exposed(statement.body, live_out)
                | upward_exposed(statement.orelse, live_out))
    if isinstance(statement, ast.For | ast.AsyncFor):
        body = upward_exposed(statement.body, live_out) - set(target_names(statement.target))
        return loaded_names([statement.iter]) | body | upward_exposed(statement.orelse, live_out)
    if isinstance(statement, ast.While):
        return (loaded_names([statement.test]) | upward_exposed(statement.body, live_out)
                | upward_exposed(statement.orelse, live_out))
    if isinstance(statement, ast.With | ast.AsyncWith):
        bound = {name for item in statement.items if item.optional_vars for name in target_names(item.optional_vars)}
        return loaded_names([item.context_expr for item in statement.items]) | (
            upward_exposed(statement.body, live_out) - bound)
    return scope_reads([statement])


def definitely_assigned(statements: list[ast.stmt]) -> set[str]:
    """Names bound on every path through the statements (that do not leave early)."""
    names: set[str] = set()
    for statement in statements:
        names |= _definitely_assigned_by(statement)
    return names


def _definitely_assigned_by(statement: ast.stmt) -> frozenset[str]:
    return kept_on_node(statement, "definitely_assigned", lambda: frozenset(_definitely_assigned_in(statement)))


def _definitely_assigned_in(statement: ast.stmt) -> set[str]:
    if isinstance(statement, ast.Assign):
        return {name for target in statement.targets for name in target_names(target)}
    if isinstance(statement, ast.AnnAssign | ast.AugAssign):
        return set(target_names(statement.target)) if getattr(statement, "value", None) is not None else set()
    if isinstance(statement, ast.If):
        body, orelse = definitely_assigned(statement.body), definitely_assigned(statement.orelse)
        if always_leaves(statement.body):
            return orelse
        if always_leaves(statement.orelse) and statement.orelse:
            return body
        return body & orelse
    if isinstance(statement, ast.With | ast.AsyncWith):
        return definitely_assigned(statement.body) | {
            name for item in statement.items if item.optional_vars is not None
            for name in target_names(item.optional_vars)
        }
    if isinstance(statement, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
        return {statement.name}
    if isinstance(statement, ast.Import | ast.ImportFrom):
        return {(alias.asname or alias.name).split(".")[0] for alias in statement.names}
    if isinstance(statement, ast.Expr):
        return {node.target.id for node in ast.walk(statement) if isinstance(node, ast.NamedExpr)}
    if isinstance(statement, ast.For) and _certainly_iterates(statement.iter):
        # The first pass certainly runs: it binds the target, and the body's certain
        # bindings when nothing can cut that pass short.
        cut = any(isinstance(node, ast.Break | ast.Continue) for node in own_nodes(statement.body))
        return set(target_names(statement.target)) | (set() if cut else definitely_assigned(statement.body))
    return set()


def _certainly_iterates(iterable: ast.expr) -> bool:
    """Whether a loop over ``iterable`` runs at least once whatever the inputs: a non-empty
    literal sequence, or ``range`` of literal bounds that is not empty (``range`` itself
    not rebound is assumed, as everywhere in the rewrites)."""
    if isinstance(iterable, ast.Tuple | ast.List):
        return bool(iterable.elts) and not any(isinstance(element, ast.Starred) for element in iterable.elts)
    if is_range(iterable) and not iterable.keywords and 1 <= len(iterable.args) <= 3:
        literal = [literal_int(arg) for arg in iterable.args]
        bounds = [bound for bound in literal if bound is not None]
        if len(bounds) != len(literal):
            return False
        if len(bounds) == 1:
            bounds = [0, *bounds]
        step = bounds[2] if len(bounds) == 3 else 1
        return step != 0 and len(range(bounds[0], bounds[1], step)) > 0
    return False


def literal_int(node: ast.AST) -> int | None:
    """The value of an int literal (``3``, ``-1``; not ``True``), else None."""
    if isinstance(node, ast.Constant) and type(node.value) is int:
        return node.value
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        inner = literal_int(node.operand)
        return -inner if inner is not None else None
    return None


def upward_exposed(statements: list[ast.stmt], live_out: frozenset[str] | set[str] = frozenset()) -> set[str]:
    """Names that may be read before the statements have certainly bound them.

    A name bound only on some paths inside a compound statement (an ``if`` without ``else``, a
    loop that may not run) counts as read there when it may be read later before it is bound
    again -- by a later statement, or after the block (``live_out``): the path that skips the
    binding keeps, and so needs, the value from before.
    """
    # Backwards, with what is live after each statement: the names a later statement may read
    # before binding them, or that are live after the block and not certainly bound between.
    # (A later read of a name that statement binds first does not count.)
    exposed: set[str] = set()
    live = set(live_out)
    for statement in reversed(statements):
        reads = _exposed_by(statement, live)
        certain = _definitely_assigned_by(statement)
        exposed = reads | (exposed - certain)
        if not isinstance(statement, ast.Assign | ast.AnnAssign | ast.AugAssign | ast.Expr):
            exposed |= (assigned_names([statement]) - certain) & live
        live = reads | (live - certain)
    return exposed


def always_leaves(statements: list[ast.stmt]) -> bool:
    """Every path through the statements ends in ``return`` or ``raise``."""
    if not statements:
        return False
    last = statements[-1]
    if isinstance(last, ast.Return | ast.Raise):
        return True
    if isinstance(last, ast.If):
        return always_leaves(last.body) and always_leaves(last.orelse)
    if isinstance(last, ast.With | ast.AsyncWith):
        return always_leaves(last.body)
    return any(isinstance(statement, ast.Return | ast.Raise) for statement in statements[:-1])


def reaching(statements: Sequence[ast.stmt]) -> list[ast.stmt]:
    """The statements as far as they can run before a point after them: each block of an
    `if` (or loop) that always returns or raises left out (a copy of the statement is made
    where one is; the rest are the statements themselves)."""
    kept: list[ast.stmt] = []
    for statement in statements:
        if isinstance(statement, ast.If | ast.For | ast.While):
            body, orelse = statement.body, statement.orelse
            pruned = [[] if always_leaves(block) else reaching(block) for block in (body, orelse)]
            if pruned != [body, orelse]:
                statement = ast.copy_location(type(statement)(**{**vars(statement), "body": pruned[0],
                                                                 "orelse": pruned[1]}), statement)
        kept.append(statement)
    return kept


def returns_with_paths(statements: Sequence[ast.stmt],
                       before: Sequence[ast.stmt] = ()) -> list[tuple[ast.Return, list[ast.stmt]]]:
    """Each `return` of the statements (in them, their `if`s and loops), with the statements
    run before it on its path: for one in a loop, the whole loop stands for the passes before
    it (what it reads holds a value some pass binds); nested functions are not followed, nor
    a `with` or `try`."""
    found: list[tuple[ast.Return, list[ast.stmt]]] = []
    for index, statement in enumerate(statements):
        prefix = [*before, *statements[:index]]
        if isinstance(statement, ast.Return):
            found.append((statement, prefix))
        elif isinstance(statement, ast.If):
            found += returns_with_paths(statement.body, prefix) + returns_with_paths(statement.orelse, prefix)
        elif isinstance(statement, ast.For | ast.While):
            found += returns_with_paths([*statement.body, *statement.orelse], [*prefix, statement])
    return found


def contains_return(statements: list[ast.stmt]) -> bool:
    return any(isinstance(node, ast.Return) for node in own_nodes(statements))


def obstacles(statements: list[ast.stmt], allow_return: bool, modules: set[str],
              read_after: Callable[[str], bool] = lambda name: True,
              resolve: Callable[[ast.AST], str | None] = lambda node: None) -> Iterator[tuple[ast.AST, str]]:
    """(node, reason) for each thing in the statements that a branch function cannot hold.

    ``modules`` are the module's import names: ``jnp.append(x, v)`` changes nothing. A
    function or class defined in them is a temporary of the branch function unless its name
    is ``read_after`` the statement (a function cannot be a branch's output); so is an object
    the statements make themselves (``buf = np.zeros(3)``, resolved by ``resolve``), and
    writing into it changes nothing outside them.
    """
    own = {name for name in made_here(statements, resolve) if not read_after(name)}
    for statement in statements:
        for node in own_nodes([statement]):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef) and not read_after(node.name):
                continue
            changed = changed_objects(node)
            if changed and all(name in own for name in changed):
                continue
            reason = _obstacle(node, allow_return, modules)
            if reason:
                yield node, reason
            elif isinstance(node, ast.Break | ast.Continue) and not _inside_loop(statement, node):
                word = "break" if isinstance(node, ast.Break) else "continue"
                yield node, f"`{word}` leaves the loop from inside the branch"


# Libraries whose modules (classes: `nn.Dense`, `hk.Linear`) keep state outside JAX's view:
# made or called inside a lax.cond branch or loop body they fail (flax and haiku have their
# own `nn.cond`/`hk.cond`). equinox modules are pytrees and work anywhere.
STATEFUL_MODULE_LIBRARIES = ("flax.", "haiku.")


def framework_obstacles(statements: list[ast.stmt],
                        resolve: Callable[[ast.AST], str | None]) -> Iterator[tuple[ast.AST, str]]:
    """(node, reason) for each flax or haiku module made in the statements."""
    for statement in statements:
        for node in ast.walk(statement):
            if isinstance(node, ast.Call):
                name = resolve(node.func) or ""
                if name.startswith(STATEFUL_MODULE_LIBRARIES) and name.rpartition(".")[2][:1].isupper():
                    library = name.partition(".")[0]
                    yield node, (f"a {library} module (`{name.rpartition('.')[2]}`) is made inside; lax "
                                 f"primitives cannot hold it (use {library}'s own "
                                 f"`{'nn' if library == 'flax' else 'hk'}.cond`/loops)")


def made_here(statements: list[ast.stmt], resolve: Callable[[ast.AST], str | None]) -> set[str]:
    """Names that, wherever the statements use them, hold an object the statements made:
    every binding of them here (nested blocks included) is a new list, dict or set, a
    comprehension or a call of the catalogue's ``FRESH_OBJECTS``, and none is read before
    it is bound here."""
    values: dict[str, list[ast.expr | None]] = {}
    for node in own_nodes(statements):
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            values.setdefault(node.targets[0].id, []).append(node.value)
        elif isinstance(node, ast.stmt):
            for name in assigned_names([node]) - assigned_names(_blocks_of(node)):
                values.setdefault(name, []).append(None)  # bound otherwise (`for`, unpacking, `with`)
    exposed = upward_exposed(statements)
    return {name for name, bound in values.items() if name not in exposed
            and all(value is not None and _makes_an_object(value, resolve) for value in bound)}


def nested_blocks(statement: ast.stmt) -> list[list[ast.stmt]]:
    """The statement lists a compound statement holds: its body, `else`, `finally`, each
    `except` and `case` (a def's or class's body too)."""
    blocks = [getattr(statement, field, None) for field in ("body", "orelse", "finalbody")]
    handlers = [handler.body for handler in getattr(statement, "handlers", [])]
    cases = [case.body for case in getattr(statement, "cases", [])]
    return [block for block in [*blocks, *handlers, *cases] if isinstance(block, list)]


def _blocks_of(statement: ast.stmt) -> list[ast.stmt]:
    """The statements nested in a compound statement (its own binding aside)."""
    return [nested for block in nested_blocks(statement) for nested in block]


def _makes_an_object(value: ast.expr, resolve: Callable[[ast.AST], str | None]) -> bool:
    if isinstance(value, ast.List | ast.Dict | ast.Set | ast.ListComp | ast.DictComp | ast.SetComp):
        return True
    if isinstance(value, ast.Call):
        name = value.func.id if isinstance(value.func, ast.Name) else resolve(value.func)
        return name in FRESH_OBJECTS
    return False


def changed_objects(node: ast.AST) -> list[str | None]:
    """The names whose objects ``node`` writes into or changes (``buf[1] = v``,
    ``xs.append(v)``); None for an object no name holds (``f().append(v)``)."""
    if isinstance(node, ast.Attribute | ast.Subscript) and isinstance(node.ctx, ast.Store | ast.Del):
        receivers: list[ast.AST] = [node.value]
    else:
        receivers = [call.func.value for call in method_changes(node)]  # type: ignore[attr-defined]
    names: list[str | None] = []
    for receiver in receivers:
        while isinstance(receiver, ast.Subscript | ast.Attribute):
            receiver = receiver.value
        names.append(receiver.id if isinstance(receiver, ast.Name) else None)
    return names


_ONLY_CHANGING = MUTATING_METHODS - VALUE_RETURNING_MUTATORS
_COMPREHENSIONS = (ast.ListComp, ast.SetComp, ast.GeneratorExp)


def method_changes(node: ast.AST) -> Iterator[ast.Call]:
    """The calls of a method that changes its object (``xs.append(v)``) whose place is
    ``node``: for one that returns None, an expression statement, a lambda or a comprehension
    that drops its value; for one that also returns a value (``d.pop(k)``), the call itself.
    Every call has one such place, so a walk meets each once. One whose value is kept is
    another object's method of that name, not a change (``updates, state =
    optimizer.update(grads, state)``): the list, dict and set methods that only change their
    object return None, and no one keeps that."""
    kind = type(node)
    if kind is ast.Call:
        func = node.func  # type: ignore[attr-defined]
        if type(func) is ast.Attribute and func.attr in VALUE_RETURNING_MUTATORS:
            yield node  # type: ignore[misc]
        return
    if kind is ast.Expr:
        dropped = [node.value]  # type: ignore[attr-defined]
    elif kind is ast.Lambda:
        dropped = [node.body]  # type: ignore[attr-defined]
    elif kind in _COMPREHENSIONS:
        dropped = [node.elt]  # type: ignore[attr-defined]
    else:
        return
    while dropped:  # `xs and xs.append(v)`, `a.append(v) if c else b.append(v)` drop theirs too
        expr = dropped.pop()
        if type(expr) is ast.Call:
            func = expr.func
            if type(func) is ast.Attribute and func.attr in _ONLY_CHANGING:
                yield expr
        elif type(expr) is ast.BoolOp:
            dropped.extend(reversed(expr.values))
        elif type(expr) is ast.IfExp:
            dropped.extend((expr.orelse, expr.body))
        elif type(expr) in (ast.Tuple, ast.List):
            dropped.extend(reversed(expr.elts))


def writes_outside(function: ast.FunctionDef | ast.AsyncFunctionDef, modules: set[str],
                   callee: Callable[[str], ast.FunctionDef | ast.AsyncFunctionDef | None],
                   resolve: Callable[[ast.AST], str | None],
                   seen: frozenset[ast.AST] = frozenset()) -> ast.stmt | ast.expr | None:
    """Where the function -- or a function it calls that ``callee`` finds by name -- changes
    an object it does not make itself (one it is given or reads from around it), or
    declares a name global or nonlocal; None when a call of it changes nothing outside."""
    body = function.body
    own = made_here(body, resolve)
    for node in own_nodes(body):
        if isinstance(node, ast.Global | ast.Nonlocal):
            return node
        if isinstance(node, ast.stmt | ast.expr) and _changes_an_object(node, modules) \
                and any(name not in own for name in changed_objects(node)):
            return node
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
            called = callee(node.func.id)
            if called is not None and called not in seen \
                    and writes_outside(called, modules, callee, resolve, seen | {function}) is not None:
                return node
    return None


# What runs on the host when Python runs it: under tracing, once per trace, not per call.
TRACE_TIME_EFFECTS = ("logging.", "warnings.warn")


def trace_time_effect(function: ast.FunctionDef | ast.AsyncFunctionDef,
                      callee: Callable[[str], ast.FunctionDef | ast.AsyncFunctionDef | None],
                      resolve: Callable[[ast.AST], str | None],
                      seen: frozenset[ast.AST] = frozenset()) -> ast.Call | None:
    """Where the function -- or a function it calls that ``callee`` finds by name -- prints,
    logs or warns (``print(...)``, ``logging.info(...)``, ``warnings.warn(...)``), if it does:
    traced, that happens once while tracing, wherever the call sits. (``jax.debug.print`` and
    callbacks run with the compiled code, on the path taken, and are not such effects.)"""
    for node in own_nodes(function.body):
        if not isinstance(node, ast.Call):
            continue
        if isinstance(node.func, ast.Name) and node.func.id == "print":
            return node
        name = resolve(node.func) or ""
        if name.startswith(TRACE_TIME_EFFECTS):
            return node
        if isinstance(node.func, ast.Name):
            called = callee(node.func.id)
            if called is not None and called is not function and called not in seen \
                    and trace_time_effect(called, callee, resolve, seen | {function}) is not None:
                return node
    return None


def _changes_an_object(node: ast.AST, modules: set[str]) -> bool:
    """``obj[k] = v``, ``obj.a = v``, ``del obj[k]``, or a method call that changes its object."""
    return isinstance(node, ast.Attribute | ast.Subscript) and isinstance(node.ctx, ast.Store | ast.Del) \
        or _change_by_method(node, modules) is not None


def _change_by_method(node: ast.AST, modules: set[str]) -> ast.Call | None:
    """The call ``xs.append(v)`` whose place ``node`` is (``method_changes``; not
    ``jnp.append(x, v)``, a module's function, nor ``x.at[i].add(v)``)."""
    for call in method_changes(node):
        receiver = call.func.value  # type: ignore[attr-defined]
        if not (isinstance(receiver, ast.Name) and receiver.id in modules) and not _is_functional_update(receiver):
            return call
    return None


def _inside_loop(root: ast.AST, target: ast.AST) -> bool:
    """Whether target sits inside a loop nested in root."""
    for node in ast.walk(root):
        if isinstance(node, ast.For | ast.AsyncFor | ast.While) and node is not target:
            if any(child is target for child in ast.walk(node)):
                return True
    return False


def _is_functional_update(receiver: ast.AST) -> bool:
    """``x.at[i]``: ``.set``/``.add`` on it return a new array and change nothing."""
    return (isinstance(receiver, ast.Subscript) and isinstance(receiver.value, ast.Attribute)
            and receiver.value.attr == "at")


def _obstacle(node: ast.AST, allow_return: bool, modules: set[str]) -> str | None:
    if isinstance(node, ast.Yield | ast.YieldFrom):
        return "`yield` in a branch: a generator cannot become a branch function"
    if isinstance(node, ast.Await):
        return "`await` in a branch"
    if isinstance(node, ast.Global | ast.Nonlocal):
        return f"`{type(node).__name__.lower()} {', '.join(node.names)}` in a branch"
    if isinstance(node, ast.Raise):
        return ("`raise` in a branch: a traced condition cannot raise under jit "
                "(use `jax.experimental.checkify` or `equinox.error_if`)")
    if isinstance(node, ast.Return) and not allow_return:
        return "`return` in a branch that is not the function's last statement"
    if isinstance(node, ast.Delete):
        return "`del` in a branch"
    if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
        return f"a branch defines `{node.name}`"
    if isinstance(node, ast.Import | ast.ImportFrom):
        return "an import in a branch"
    if isinstance(node, ast.Attribute | ast.Subscript) and isinstance(node.ctx, ast.Store):
        return (f"`{ast.unparse(node)} = ...` writes into an object: both branches run at trace "
                "time, so the write would happen whichever branch is taken")
    if (call := _change_by_method(node, modules)) is not None:
        return (f"`{ast.unparse(call.func)}(...)` changes an object: both branches run at trace "
                "time, so the change would happen whichever branch is taken")
    return None


def local_names(function: ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda) -> set[str]:
    """The names local to a function: its parameters and what its body binds (not the names
    it declares ``global`` or ``nonlocal``)."""
    parameters = _parameters(function)
    if not isinstance(function, ast.FunctionDef | ast.AsyncFunctionDef):
        return parameters
    return parameters | (assigned_names(function.body) - declared_names(function))


def declared_names(function: ast.FunctionDef | ast.AsyncFunctionDef) -> set[str]:
    """The names a function declares ``global`` or ``nonlocal``."""
    return {name for node in walk_body(function) if isinstance(node, ast.Global | ast.Nonlocal) for name in node.names}


def closures(function: ast.FunctionDef | ast.AsyncFunctionDef) -> dict[str, tuple[ast.AST, frozenset[str]]]:
    """The functions ``function`` defines (``def g``, ``g = lambda``), each with its node and
    the names of ``function`` it reads when called -- its own, and those of the closures it
    calls."""
    return {name: (node, closure_reads(function, node)) for name, node in _closures_by_name(function).items()}


def closure_reads(function: ast.FunctionDef | ast.AsyncFunctionDef, closure: ast.AST) -> frozenset[str]:
    """The names of ``function`` that ``closure``, a def it defines (or the statement
    ``g = lambda ...``), reads when called: its own reads and those of the closures it calls,
    and theirs (found for this one alone: a function may define many). Empty for one whose
    name a later definition takes."""
    found = _closures_by_name(function)
    reads: set[str] = set()
    pending = [closure] if closure in found.values() else []
    seen: set[int] = set()
    while pending:
        node = pending.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        own = _own_closure_reads(function, node)
        reads |= own
        pending.extend(found[name] for name in own if name in found)
    return frozenset(reads)


def _closures_by_name(function: ast.FunctionDef | ast.AsyncFunctionDef) -> dict[str, ast.stmt]:
    """The statements that define a function of ``function`` (``def g``, ``g = lambda``) by
    name (the last, for a name defined twice); kept on the node."""
    found = function.__dict__.get("_jitfix_closures")
    if found is None:
        found = {}
        for node in walk_body(function):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                found[node.name] = node
            elif isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name) \
                    and isinstance(node.value, ast.Lambda):
                found[node.targets[0].id] = node
        function._jitfix_closures = found  # type: ignore[union-attr]
    return found


def _own_closure_reads(function: ast.FunctionDef | ast.AsyncFunctionDef, closure: ast.AST) -> set[str]:
    """The names of ``function`` that ``closure``'s own body reads (not through other closures);
    kept on the closure's node, as ``function``'s names are on its."""
    reads = closure.__dict__.get("_jitfix_closure_reads")
    if reads is None:
        bound = function.__dict__.get("_jitfix_bound")
        if bound is None:
            bound = function._jitfix_bound = assigned_names(function.body) | _parameters(function)  # type: ignore[union-attr]
        inner = closure.value if isinstance(closure, ast.Assign) else closure
        reads = closure._jitfix_closure_reads = free_names_when_called(inner) & bound  # type: ignore[attr-defined,arg-type]
    return reads


def _parameters(function: ast.AST) -> set[str]:
    """The names of a def's or lambda's parameters."""
    return {arg.arg for arg in ast.walk(function.args) if isinstance(arg, ast.arg)}  # type: ignore[attr-defined]


def reaching_assignment(function: ast.FunctionDef | ast.AsyncFunctionDef, name: str,
                      at: ast.stmt) -> ast.Assign | None:
    """The ``name = value`` that ``name`` holds at ``at``, when every binding of ``name`` in
    the function is such a statement of its straight-line body (not in a branch or a loop):
    the last one before the statement holding ``at``. None for a parameter, any other kind of
    binding, or none before."""
    if name in _parameters(function):
        return None
    bindings: list[ast.Assign] = []
    for node in walk_body(function):
        if isinstance(node, ast.Name) and node.id == name and not isinstance(node.ctx, ast.Load):
            holder = _top_statement(function, node)
            if not (isinstance(holder, ast.Assign) and len(holder.targets) == 1 and holder.targets[0] is node):
                return None
            bindings.append(holder)
        elif _binds(node, name):
            return None
    holder = _top_statement(function, at)
    if holder is None:
        return None
    position = function.body.index(holder)
    before = [binding for binding in bindings if function.body.index(binding) < position]
    return before[-1] if before else None


def unchanged_parameter(function: ast.FunctionDef | ast.AsyncFunctionDef, name: str) -> bool:
    """Whether ``name`` is a parameter of the function that its own body never binds again:
    every read of it is the argument."""
    return name in _parameters(function) and not any(
        isinstance(node, ast.Name) and node.id == name and not isinstance(node.ctx, ast.Load) or _binds(node, name)
        for node in walk_body(function))


def _binds(node: ast.AST, name: str) -> bool:
    """Whether a statement or clause other than an assignment binds ``name``: a def, a class,
    an import, ``global``/``nonlocal``, ``except ... as``, a ``case`` capture."""
    if isinstance(node, ast.Import | ast.ImportFrom):
        return any((alias.asname or alias.name.partition(".")[0]) == name for alias in node.names)
    if isinstance(node, ast.Global | ast.Nonlocal):
        return name in node.names
    if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef | ast.ExceptHandler
                  | ast.MatchAs | ast.MatchStar):
        return node.name == name
    return False


def _top_statement(function: ast.FunctionDef | ast.AsyncFunctionDef, node: ast.AST) -> ast.stmt | None:
    """The statement of the function's own top-level body that holds ``node``."""
    for statement in function.body:
        if statement is node or any(inner is node for inner in ast.walk(statement)):
            return statement
    return None


# Methods that read a dict and keep no hold on it.
_DICT_READS = frozenset({"get", "keys", "values", "items", "copy"})


def private_dicts(function: ast.FunctionDef | ast.AsyncFunctionDef, handed: frozenset[str] = frozenset()) -> frozenset[str]:
    """Local names only ever bound to a new dict (``{...}``, ``dict(...)``) and used only
    through their items (``d[k]``, ``d[k] = v``, ``d.get(k)``, ``{**d}``) or returned: nothing
    else can hold the same dict, so ``d[k] = v`` means the same as ``d = {**d, k: v}``.
    ``handed``: parameters each call hands a container of the function's own (jit rebuilds a
    pytree argument from its leaves), which are such dicts where every item they are indexed
    by is a string (an array is not) and the function returns them: writes into one it does
    not return are meant for the caller's dict (which under jit they never reach). Kept on
    the function's node for each ``handed``: the rules and the planner ask it many times."""
    key = "private_dicts_" + ",".join(sorted(handed))
    return kept_on_node(function, key, lambda: _private_dicts(function, handed))


def _private_dicts(function: ast.FunctionDef | ast.AsyncFunctionDef, handed: frozenset[str]) -> frozenset[str]:
    params = _parameters(function)
    parents = parents_in(function)
    made: set[str] = set(handed & _indexed_by_strings(function, handed) & _returned_names(function))
    other: set[str] = set(params) - made  # bound some other way, or declared global/nonlocal
    for node in nodes_of(function):
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            (made if _is_new_dict(node.value) else other).add(node.targets[0].id)
        elif isinstance(node, ast.Global | ast.Nonlocal):
            other.update(node.names)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store | ast.Del):
            parent = parents.get(id(node))
            if not (isinstance(parent, ast.Assign) and len(parent.targets) == 1 and parent.targets[0] is node):
                other.add(node.id)
    names = made - other
    local_defs = {node.name: node for node in nodes_of(function)
                  if isinstance(node, ast.FunctionDef) and node is not function}
    for node in nodes_of(function):
        if isinstance(node, ast.Name) and node.id in names and isinstance(node.ctx, ast.Load) \
                and not _reads_items_only(node, parents, local_defs):
            names.discard(node.id)
    return frozenset(names)


def _returned_names(function: ast.FunctionDef | ast.AsyncFunctionDef) -> set[str]:
    """The names the function's own returns give back, alone or as items of a tuple."""
    found: set[str] = set()
    for node in walk_body(function):
        if isinstance(node, ast.Return) and node.value is not None:
            values = node.value.elts if isinstance(node.value, ast.Tuple) else [node.value]
            found.update(value.id for value in values if isinstance(value, ast.Name))
    return found


def _indexed_by_strings(function: ast.AST, names: frozenset[str]) -> set[str]:
    """Those of ``names`` the function indexes (reads or writes an item of) only by string
    constants, at least once."""
    keys: dict[str, list[bool]] = {}
    for node in nodes_of(function):
        if isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name) and node.value.id in names:
            keys.setdefault(node.value.id, []).append(
                isinstance(node.slice, ast.Constant) and isinstance(node.slice.value, str))
    return {name for name, strings in keys.items() if all(strings)}


def _reads_items_only(name: ast.Name, parents: dict[int, ast.AST],
                      local_defs: dict[str, ast.FunctionDef] | None = None,
                      visiting: frozenset[tuple[str, int]] = frozenset()) -> bool:
    parent = parents.get(id(name))
    if isinstance(parent, ast.Call) and local_defs and isinstance(parent.func, ast.Name) \
            and parent.func.id in local_defs and name in parent.args:
        position = parent.args.index(name)
        if (parent.func.id, position) in visiting:  # a recursive call: what it does is being checked
            return True
        return _only_items_read_by(local_defs[parent.func.id], position, parents, local_defs,
                                   visiting | {(parent.func.id, position)})
    if isinstance(parent, ast.Subscript) and parent.value is name:
        return True
    if isinstance(parent, ast.Attribute) and parent.attr in _DICT_READS:
        return isinstance(parents.get(id(parent)), ast.Call)
    if isinstance(parent, ast.Dict):  # `{**d, ...}`
        return any(key is None and value is name for key, value in zip(parent.keys, parent.values))
    if isinstance(parent, ast.Tuple) and isinstance(parents.get(id(parent)), ast.Return):
        return True
    return isinstance(parent, ast.Return)


def _only_items_read_by(function: ast.FunctionDef, position: int, parents: dict[int, ast.AST],
                        local_defs: dict[str, ast.FunctionDef], visiting: frozenset[tuple[str, int]]) -> bool:
    """Whether a function of the function, given a dict as its positional argument
    ``position``, only reads that parameter's items, passes it on to such functions, or binds
    the parameter to a new dict of its own: the dict is still held by nothing else (a
    continuation the code after an `if` became)."""
    names = [arg.arg for arg in function.args.posonlyargs + function.args.args]
    if position >= len(names):
        return False
    param = names[position]
    uses = [node for node in nodes_of(function) if isinstance(node, ast.Name) and node.id == param]
    return all(_reads_items_only(node, parents, local_defs, visiting) if isinstance(node.ctx, ast.Load)
               else _binds_a_new_dict(node, parents) for node in uses)


def _binds_a_new_dict(name: ast.Name, parents: dict[int, ast.AST]) -> bool:
    """``name = {...}`` or ``name = dict(...)``: the name then holds a dict nothing else does."""
    parent = parents.get(id(name))
    if not (isinstance(parent, ast.Assign) and len(parent.targets) == 1 and parent.targets[0] is name):
        return False
    return _is_new_dict(parent.value)


def _is_new_dict(value: ast.AST) -> bool:
    return isinstance(value, ast.Dict) or (isinstance(value, ast.Call) and isinstance(value.func, ast.Name)
                                           and value.func.id == "dict")


# Array functions that make an array larger (or smaller) than their inputs.
RESHAPING_FUNCTIONS = frozenset({"concatenate", "append", "stack", "hstack", "vstack", "dstack", "column_stack",
                                 "pad", "tile", "repeat", "insert", "delete"})


def shape_growth(name: str, body: list[ast.stmt], imports: ImportTable,
                 modules: tuple[str, ...] = ("jax.numpy.",)) -> tuple[ast.AST, str] | None:
    """An assignment in ``body`` that gives ``name`` a shape built from its own
    (``x = jnp.append(x, v)``, ``x = x[1:]``, ``xs = xs + [v]``), and how; ``modules``: whose
    array functions count (``numpy.`` too, outside traced code)."""
    for node in ast.walk(ast.Module(body=body, type_ignores=[])):
        if not (isinstance(node, ast.Assign) and any(name in target_names(t) for t in node.targets)):
            continue
        value = node.value
        reads_itself = name in loaded_names([value])
        if isinstance(value, ast.Call) and reads_itself:
            function = imports.resolve(value.func) or ""
            if function.startswith(modules) and function.rpartition(".")[2] in RESHAPING_FUNCTIONS:
                return node, f"`{ast.unparse(value.func)}`"
        if isinstance(value, ast.Subscript) and isinstance(value.value, ast.Name) and value.value.id == name \
                and any(isinstance(part, ast.Slice) for part in ast.walk(value.slice)):
            return node, "a slice of itself"
        if isinstance(value, ast.BinOp) and isinstance(value.op, ast.Add) and reads_itself \
                and isinstance(value.right, ast.List | ast.Tuple):
            return node, "a Python sequence that grows"
    return None


def rows_iterated(node: ast.For) -> ast.Name | None:
    """The array a loop takes the rows of, named and not rebound in the body: ``x`` of
    ``for v in x`` or ``for i, v in enumerate(x)``; else None."""
    iterable, target = node.iter, node.target
    if isinstance(iterable, ast.Call) and isinstance(iterable.func, ast.Name) and iterable.func.id == "enumerate" \
            and len(iterable.args) == 1 and not iterable.keywords and isinstance(target, ast.Tuple) \
            and len(target.elts) == 2 and isinstance(target.elts[0], ast.Name):
        iterable = iterable.args[0]
    if not isinstance(iterable, ast.Name) or iterable.id in assigned_names(node.body):
        return None
    return iterable


def is_range_call(iterable: ast.AST, imports) -> bool:
    """``range(...)`` with one to three positional arguments, the builtin (not a name the
    module imports as ``range``)."""
    return (is_range(iterable) and "range" not in imports.aliases and not iterable.keywords
            and 1 <= len(iterable.args) <= 3)
