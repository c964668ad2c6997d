"""The Discord adapter (discord.py 2.x): channels and threads as sessions, persistent buttons,
forms (modals) for what a button asks before its click, moderators by role or permission, and
``/deliberate``. It translates; the core decides."""

__all__: list[str] = []
