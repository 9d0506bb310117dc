"""The sections of each page, below the page script that calls them: ``ui/sections/<page>.py`` holds
what ``pages/<page>.py`` draws (its dataclasses, helpers and section functions, the lecture's slides),
so a page script reads top to bottom as the page looks. A section shared by two pages gets a module
named for its concept here."""
