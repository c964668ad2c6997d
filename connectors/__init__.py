"""One module per external system and a registry of named actions (built by the rules issue).
Connectors never write state except through the MutationGateway."""
