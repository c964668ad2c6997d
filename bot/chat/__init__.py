"""What Slack, Discord and the console do alike, in one vocabulary of team, person, place and
message: the answers to a person's commands, break-glass, notices, requests, the people a role
names, deliveries seen once, what a click came to, and the directory of workspaces."""
