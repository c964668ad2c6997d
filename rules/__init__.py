"""Automation: YAML rules that act on committed mutations.

The shared parts at this level: the DSL (``dsl``), its config sections, templates, the loaded
book and its key index, the variables a rule sees, key names, the connector API and the
history of evaluations and actions. ``rules.engine`` reads the mutation log and admits runs
onto the RQ queue; ``rules.worker`` runs them, each step at most once; ``rules.service`` is
the loop that drives the engine and puts back runs whose worker died.
"""

__all__: list[str] = []
