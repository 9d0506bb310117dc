"""Rooms on the Lecture page (ui/classroom.py): the class follows the lecturer."""

STRINGS = {
    # the lecturer's sidebar
    "classroom.sidebar": "Teach a class",
    "classroom.start": "Start a room",
    "classroom.presenting": "You are presenting room {code}. Every step and setting you show, the class sees.",
    "classroom.recover": "Take over a room on this device",
    "classroom.recover_code": "Room code",
    "classroom.recover_pin": "Presenter PIN",
    "classroom.recover_button": "Take over",
    # the lecturer's panel
    "classroom.panel": "Room {code}: how students join (fold this away once they have)",
    "classroom.code_label": "Room code",
    "classroom.url_label": "Students open this address, or scan the QR code:",
    "classroom.qr": "Scan to follow the lecture",
    "classroom.present": "Following now",
    "classroom.pin_button": "Presenter PIN",
    "classroom.pin_help": 'To drive this room from another device: open the Lecture page there, choose "Take over a room" in the sidebar and type the room code and this PIN. Keep it off the projector.',
    "classroom.end": "End the room",
    # a student
    "classroom.following": "Following room **{code}**: this page shows the lecturer's step and settings.",
    "classroom.leave": "Leave",
    "classroom.alone": "Exploring on your own (room **{code}**). Rejoin to follow the lecturer again.",
    "classroom.rejoin": "Rejoin",
    "classroom.left": "You left room {code}: you are exploring on your own.",
    "classroom.left_settings": "You changed a setting, so you left room {code} to explore on your own.",
    "classroom.left_step": "You moved to another step, so you left room {code} to explore on your own.",
    # what happened to a room
    "classroom.malformed": "That is not a room code: a room code is 6 letters and digits, like K7MQ2P. Showing the lecture on its own.",
    "classroom.unknown": "There is no room {code}: check the code on the projector. Showing the lecture on its own.",
    "classroom.ended": "Room {code} has ended: the lecturer ended it. You can keep exploring on your own.",
    "classroom.expired": "Room {code} has expired: the lecturer was away from it for too long. You can keep exploring on your own.",
    "classroom.error": "Room {code} cannot be used now. Showing the lecture on its own.",
    "classroom.you_ended": "You ended room {code}: its students have been told.",
    "classroom.wrong_pin": "That PIN is not the presenter PIN of room {code}.",
    "classroom.pin_locked": "Too many wrong PINs for room {code}: try again in a few minutes.",
    "classroom.recovered": "You now drive room {code} from this device.",
}
