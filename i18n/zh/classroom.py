"""讲课模式中的房间（ui/classroom.py）：全班跟随讲师。"""

STRINGS = {
    # 讲师的侧边栏
    "classroom.sidebar": "给全班上课",
    "classroom.start": "开一个房间",
    "classroom.presenting": "你正在主持房间 {code}。你展示的每一步和每项设置，全班都会看到。",
    "classroom.recover": "在这台设备上接管房间",
    "classroom.recover_code": "房间代码",
    "classroom.recover_pin": "主持人 PIN",
    "classroom.recover_button": "接管",
    # 讲师的面板
    "classroom.panel": "房间 {code}：学生如何加入（大家加入后可以收起）",
    "classroom.code_label": "房间代码",
    "classroom.url_label": "学生打开这个网址，或者扫描二维码：",
    "classroom.qr": "扫码跟随讲课",
    "classroom.present": "正在跟随",
    "classroom.pin_button": "主持人 PIN",
    "classroom.pin_help": "要在另一台设备上主持这个房间：在那里打开讲课模式，在侧边栏选择“接管房间”，输入房间代码和这个 PIN。不要把它投到大屏幕上。",
    "classroom.end": "结束房间",
    # 学生
    "classroom.following": "正在跟随房间 **{code}**：本页显示讲师当前的步骤和设置。",
    "classroom.leave": "离开",
    "classroom.alone": "你正在自己探索（房间 **{code}**）。点“重新加入”即可再次跟随讲师。",
    "classroom.rejoin": "重新加入",
    "classroom.left": "你已离开房间 {code}，现在自己探索。",
    "classroom.left_settings": "你改了一项设置，因此离开了房间 {code}，现在自己探索。",
    "classroom.left_step": "你翻到了另一步，因此离开了房间 {code}，现在自己探索。",
    # 房间的状况
    "classroom.malformed": "这不是房间代码：房间代码由 6 个字母和数字组成，例如 K7MQ2P。现在单独显示讲课内容。",
    "classroom.unknown": "没有房间 {code}：请核对大屏幕上的代码。现在单独显示讲课内容。",
    "classroom.ended": "房间 {code} 已结束：讲师结束了它。你可以继续自己探索。",
    "classroom.expired": "房间 {code} 已过期：讲师离开太久了。你可以继续自己探索。",
    "classroom.error": "房间 {code} 现在无法使用。现在单独显示讲课内容。",
    "classroom.you_ended": "你结束了房间 {code}：已通知房间里的学生。",
    "classroom.wrong_pin": "这个 PIN 不是房间 {code} 的主持人 PIN。",
    "classroom.pin_locked": "房间 {code} 的 PIN 输错次数太多：请过几分钟再试。",
    "classroom.recovered": "你现在在这台设备上主持房间 {code}。",
}
