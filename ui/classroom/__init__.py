"""The classroom: rooms (in memory or Redis), who is asking, the panels on the Lecture page, the
questions put to a room, and waking the followers' pages."""
