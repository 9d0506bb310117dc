"""干预：关闭部分（消融）、把一句话的激活修补进另一句、每一层的猜测。"""

STRINGS = {
    "interventions.badge": "已关闭：{parts}",
    "interventions.caption.zero": (
        "每个视图显示的都是改动后的模型：这里列出的每个部分输出为零（注意力头的输出在乘 W_O 之前置 0；"
        "整层则不向残差流加入任何东西）。"
    ),
    "interventions.caption.mean": (
        "每个视图显示的都是改动后的模型：这里列出的每个部分在每个位置都输出它在 {n} 个参考句子上的平均值，"
        "不论输入哪句话（它关于这句话所说的内容就没有了）。"
    ),
    "interventions.clear": "全部重新打开",
    "interventions.part.head": "注意力头 {layer}.{head}（{stack}）",
    "interventions.part.attn": "{stack}，第 {layer} 层",
    "interventions.part.ffn": "前馈网络，第 {layer} 层（{stack}）",
    "interventions.stack.enc": "编码器自注意力",
    "interventions.stack.dec": "解码器自注意力",
    "interventions.stack.dec.only": "自注意力",
    "interventions.stack.cross": "交叉注意力",
    "interventions.ffn.enc": "编码器",
    "interventions.ffn.dec": "解码器",
    "interventions.mode.zero": "置零",
    "interventions.mode.mean": "平均值",
    "interventions.sidebar.title": "关闭部分",
    "interventions.sidebar.pick": "已关闭的部分",
    "interventions.sidebar.pick.help": "之后每个页面显示的都是没有它们的模型。注意力头：关闭它的输出；某层的注意力或前馈网络：关闭整个子层。",
    "interventions.sidebar.mode": "关闭的含义",
    "interventions.sidebar.mode.zero": "置零",
    "interventions.sidebar.mode.mean": "替换为它在参考句子上的平均值",
    "interventions.ignored": "已忽略 ablate= 中的 {piece}（{why}）。",
    "interventions.why.format": "不是 <stack>.<layer>.<head|attn|ffn> 的形式，例如 dec.2.1",
    "interventions.why.stack": "这个模型没有这个堆栈；它有 {limit}",
    "interventions.why.layer": "层号必须是 1 到 {limit} 之间的数",
    "interventions.why.head": "头号必须是 1 到 {limit} 之间的数，或 attn、ffn",
    "interventions.why.cross_ffn": "交叉注意力没有自己的前馈层：那是 {limit}",
    "interventions.why.too_many": "最多只能关闭 {limit} 个部分",
    "interventions.why.too_long": "最多只读取 {limit} 个字符",
    "interventions.switch.head": "关闭注意力头 {layer}.{head}",
    "interventions.switch.heads": "第 {layer} 层已关闭的注意力头",
    "interventions.switch.grid": "已关闭的注意力头（{kind}）",
    "interventions.switch.layer": "第 {layer} 层已关闭的部分",
    "interventions.head.off": "{title} · 已关闭",
    "interventions.grid.off": "已关闭",
    "interventions.compare.title": "关闭前后对比",
    "interventions.compare.intact": "完整模型",
    "interventions.compare.ablated": "关闭 {parts} 后",
    "interventions.compare.answer": "回答",
    "interventions.compare.prob": "每个回答词元的概率",
    "interventions.compare.loss": "在重复随机序列第二遍上的损失",
    "interventions.compare.loss.value": "{loss:.2f} 奈特（第一遍 {first:.2f}）",
    "interventions.compare.loss.help": (
        "先是 {n} 个随机词元，再把同样的词元重复一遍：归纳头正常工作的模型能根据第一遍预测第二遍，"
        "所以它在第二遍上的损失远低于第一遍。"
    ),
    "interventions.compare.generated": "它在句子之后写出的内容（贪心解码，{n} 个词元）：",
    "interventions.compare.same": "关闭前后回答相同。",
    "interventions.compare.differs": "在 {total} 个位置中有 {n} 个位置的回答变了。",
}
