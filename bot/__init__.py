"""Platform adapters, the CLI and the composition root. Translates events in and views out;
decides nothing."""
