"""The classroom's figures: lecture.py the lecture's slides (one SlideView per step, any screen draws
it), exercises.py "compute it yourself" cards and verdicts as data, tally.py a room's answers."""
