"""The loop's ``update(session, msg) -> (session, cmds)``, in the Elm architecture:
``turns`` handles what people say, ``clicks`` what they click; ``present`` evaluates the beats
and shows the view; ``loop`` dispatches. Each is imported from its module, not from here: the
config reads ``settings`` alone."""
