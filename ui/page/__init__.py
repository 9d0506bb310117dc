"""Page set-up and widgets: the settings and their URL, the sidebar, navigation, the language, the
lecture's keys, sliders and widgets kept in the URL, tables, figures, and showing user text safely."""
