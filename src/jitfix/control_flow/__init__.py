"""The control-flow rewrites: a traced ``if`` -> ``lax.cond``, a traced loop ->
``lax.fori_loop``/``lax.while_loop``, a loop over rows -> ``lax.scan``.

``function`` walks one function (``FunctionPlanner`` decides, ``FunctionRewriter`` writes);
``ifs``, ``loops`` and ``scans`` each hold the plan and the code of one construct; ``plans``
is the data they pass; ``jump_lowering`` restructures nested ``break``/``continue`` first,
``continuation`` the code after an ``if`` that returns on some paths, ``dict_updates`` item
writes into a dict of the function;
``boolean_expressions`` and ``result_types`` are the expression-level pieces (JF102/JF103,
branch result types). The rules in ``jitfix.rules.conditionals`` and ``jitfix.rules.loops``
report the plans and turn them into fixes.
"""
