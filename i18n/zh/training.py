"""“训练”页（pages/training.py）、它的图表（figures/training.py）和 ui/training_jobs.py 的文字。

含 plotly ``%{...}`` 的是悬停模板，原样使用（不代入数值）。
"""

STRINGS = {
    "training.intro": (
        "Transformer 通过**教师强制**（teacher forcing）来学习：解码器读入向右错开一位的正确答案"
        "（`[BOS] y₁ … yₙ`），然后逐个词元地接受评判：它要预测出 `y₁ … yₙ [EOS]`，评分用的是交叉熵。"
        "每处理完一批数据，Adam 优化器就把每个权重都微调一点，让损失变小一些。"
    ),
    "training.sizes": (
        "模型使用侧边栏中的尺寸：d_model={d_model}，{h} 个头，{n} 层，d_ff={d_ff}，{norm}-norm，种子 {seed}。"
        "训练在本服务器的 CPU 上运行：每个浏览器会话最多一个，整个服务器最多 {limit} 个。"
    ),
    "training.task": "任务",
    "training.task.reverse": "把一串数字倒过来（一两分钟就能学会）",
    "training.task.copy": "原样复制一串数字",
    "training.task.pinyin": "汉字 → 拼音（需要几分钟，而不是几秒）",
    "training.steps": "步数（上限）",
    "training.minutes": "时间上限（分钟）",
    "training.start": "开始训练",
    "training.stop": "停止",
    "training.use": "在所有页面上使用这个模型",
    "training.busy": "服务器已经在运行 {n} 个训练（已达上限）：请过一分钟再试，或者使用随附的检查点。",
    "training.none": "本会话中还没有训练：请选择一个任务，然后点击“开始训练”。",
    "training.starting": "正在启动…",
    "training.stopping": "正在停止：这一步完成后，会在测试集上评估目前训练出的模型…",
    "training.measuring": "已到步数或时间上限：正在测试集上评估训练好的模型…",
    "training.owner": (
        "训练属于这个标签页：关闭标签页 {seconds} 秒后训练就会停止（服务器会等这么久，以防标签页重新连接），"
        "并把名额让给其他同学。"
    ),
    "training.progress": "第 {step} 步：损失 {loss}，准确率 {acc}，每秒 {speed} 个词元，已用 {seconds} 秒",
    "training.failed": "训练失败：{error}",
    "training.done.finished": (
        "训练完成，共 {steps} 步（{seconds} 秒）：测试集词元准确率 {acc}，整条序列完全正确的比例 {exact}。"
    ),
    "training.done.stopped": (
        "训练已被你停止，共 {steps} 步（{seconds} 秒）：测试集词元准确率 {acc}，整条序列完全正确的比例 {exact}。"
    ),
    "training.loss.header": "损失函数：带标签平滑的交叉熵",
    "training.loss.text": (
        "在每个位置 *t*，模型给词表中 *V* 个词元各分配一个概率 p(w)。"
        "交叉熵惩罚的是给正确词元 yₜ 的概率太小：p = 1 时 −log p 为 0，p → 0 时它会无限增大。"
        "*N* 是真实目标词元的个数（[PAD] 不计入）。\n\n"
        "**标签平滑**（ε = 0.1，与论文相同）：目标分布 q 不是把 100% 放在 yₜ 上，而是放 90%，"
        "再给每个词元各分 0.1/V，这样模型永远不会被逼到“绝对确定”。"
        "所以即使每个答案都对了，损失也不会降到 0。\n\n"
        "**准确率**：概率最大的词元恰好是正确答案的比例——训练时输入的是正确答案（教师强制），"
        "验证时则对模型从未见过的序列做贪心解码。"
    ),
    "training.lr.header": "学习率：先预热，再衰减",
    "training.lr.text": (
        "Adam（β₁ = 0.9，β₂ = 0.98，ε = 10⁻⁹，与论文相同）让每个权重沿梯度的反方向移动一小步；"
        "学习率决定这一步迈多大。论文的学习率计划先**预热**：在最初的 *warmup* 步里"
        "（本任务为 {warmup} 步；论文用的是 4,000 步）学习率线性增大——因为刚从随机初始化出发时，"
        "梯度还不可靠——之后按 1/√step 逐渐减小。\n\n"
        "这里每次训练的预算是固定的，所以本应用额外加了一段**冷却**：在预算的最后 {cooldown}"
        "（步数或时间，以先用完者为准；*s* 是预算已用掉的比例）里，学习率线性降到 0，让模型平稳收尾，而不是停在下降的半途。"
        "此外，梯度的总长度被限制在 1 以内（梯度裁剪）。"
    ),
    "training.lr.caption": (
        "“{task}”的计划：{steps} 步，warmup = {warmup}，d_model = {d_model}。如果时间上限先到，"
        "冷却也会提前开始。用这些设置训练一次之后，图中的点就是那次训练实际使用的学习率。"
    ),
    "training.compare.header": "训练好的权重与随机权重，并排比较",
    "training.compare.text": (
        "同样的尺寸、同样的输入：左边是训练好的模型，右边是随机初始化的模型。"
        "每一行是一个解码器位置；训练好的 汉字→拼音 模型会看着它正在拼读的那个字（呈现一条对角线），"
        "随机模型的注意力则毫无意义地分散开。"
    ),
    "training.compare.none": "还没有训练好的模型：请在上面训练一个（并点击“在所有页面上使用这个模型”），或者提供 assets/pinyin.pt。",
    "training.compare.input": "两个模型共同的输入",
    "training.compare.title.trained": "训练好的权重",
    "training.compare.title.random": "随机权重",
    "training.compare.predicts.trained": "训练好的模型在每个位置预测的词元",
    "training.compare.predicts.random": "随机模型在每个位置预测的词元",
    "training.fig.loss_title": "训练损失",
    "training.fig.acc_title": "准确率",
    "training.fig.loss": "损失",
    "training.fig.train_acc": "训练集词元准确率",
    "training.fig.val_acc": "验证集词元准确率（贪心解码）",
    "training.fig.step": "步数",
    "training.fig.lr": "学习率",
    "training.fig.lr_planned": "计划的学习率",
    "training.fig.lr_used": "你的训练实际使用的学习率",
    "training.fig.lr_warmup": "warmup = {warmup}",
    "training.fig.lr_hover": "第 %{x} 步<br>学习率 %{y:.3e}",
    "training.fig.cross_subtitle": "最后一个解码器层，各头平均",
    "training.fig.weight": "权重",
    "training.fig.cross_x": "源词元（键）",
    "training.fig.cross_y": "解码器输入（查询）",
}
