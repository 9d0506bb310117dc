"""“训练”页（pages/training.py）、它的图表（figures/training.py）和 ui/sections/training_jobs.py 的文字。

含 plotly ``%{...}`` 的是悬停模板，原样使用（不代入数值）。
"""

STRINGS = {
    "training.intro.lm": (
        "语言模型通过预测**下一个词元**来学习：一个因果堆栈读入一段文本 `x₁ … x_T`，在每个位置 t 上"
        "用交叉熵评估它对下一个词元 `xₜ₊₁` 的预测（没有目标句子，也没有第二个输入的教师强制）。"
        "每个批次之后，AdamW 都会微调每个权重，让损失稍微变小一点。"
    ),
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
    # 语言模型（"lm"）：它自己的尺寸、损失、学习率计划、曲线和徽标
    "training.task.lm": "语言模型（一个小 GPT，英文 + 中文 fortune 语录）：看归纳头如何形成",
    "training.sizes.lm": (
        "语言模型有它自己的尺寸，选得让归纳头在几分钟内就能形成（侧边栏的尺寸对它不适用）："
        "d_model={d_model}，{h} 个头，{n} 层，d_ff={d_ff}，位置编码 {positions}，每个窗口 {context} 个词元，"
        "先在训练文本上学出一个 {merges} 次合并的字节级 BPE，种子 {seed}。"
        "它的归纳头需要几千步才会出现：选中它时，上限会设为 {steps} 步、{minutes} 分钟。"
        "训练在本服务器的 CPU 上运行：每个浏览器会话最多一个，整个服务器最多 {limit} 个。"
    ),
    "training.starting.lm": "正在训练文本上学习字节级 BPE，然后开始最初的几步…",
    "training.progress.lm": (
        "第 {step} 步：损失 {loss}，验证集困惑度 {ppl}，最佳前缀匹配分数 {pm}，每秒 {speed} 个词元，已用 {seconds} 秒"
    ),
    "training.done.lm.finished": (
        "训练完成，共 {steps} 步（{seconds} 秒）：测试集困惑度 {ppl}；最佳前缀匹配分数 {pm}（{head}）。"
    ),
    "training.done.lm.stopped": (
        "训练已被你停止，共 {steps} 步（{seconds} 秒）：测试集困惑度 {ppl}；最佳前缀匹配分数 {pm}（{head}）。"
    ),
    "training.lm.missing": "这里无法训练语言模型：{error}",
    "training.lm.curves": (
        "**前缀匹配**（Olsson 等，2022）：让模型读一串重复两遍的随机词元；在第二遍的每个词元处，"
        "看一个头把多少注意力放在第一遍中同一个词元*后面*的那个词元上——这正是**归纳头**的回看方式"
        "（… A B … A → B）。中间的图是得分最高的那个头的分数，每 {every} 步在正在训练的模型上测量一次"
        "（注意力平均分散时约为 0.02）。很长一段时间里什么都不发生；归纳头一旦形成，分数就会离开 0 "
        "迅速上升——这就是论文所说的**相变**（phase change）——训练损失（其窗口中含有重复的段落）"
        "也随之下降，而验证集困惑度（原样的文本）几乎不变。在此之前就停止的训练，分数会一直接近 0。"
        "这是测出来的，不是画出来的。"
    ),
    "training.loss.header.lm": "损失函数：下一个词元的交叉熵",
    "training.loss.text.lm": (
        "语言模型读一段文本 x₁ … x_T，在每个位置 *t* 只看 x₁ … xₜ（因果掩码遮住后面的部分），"
        "给词表中 *V* 个词元各分配一个“下一个出现”的概率。损失是它给真正的下一个词元的概率取 −log，"
        "再对 *T* 个位置求平均：没有源句子，也没有标签平滑。\n\n"
        "**困惑度** = exp(损失)：模型的不确定程度，相当于在这么多个词元中挑一个；"
        "随机模型的困惑度大约等于词表大小。\n\n"
        "{share} 的训练窗口里，窗口中的一段文字会在后面再写一遍（副歌、引文和诗句也会重复）："
        "要预测第二遍，只有回头去看才划算——这正是归纳头的工作。"
    ),
    "training.lr.text.lm": (
        "AdamW（β₁ = 0.9，β₂ = 0.95，权重矩阵上的权重衰减为 0.1）让每个权重沿梯度的反方向移动一小步。"
        "学习率在最初 {warmup} 步里线性**预热**到 lr = {lr}，之后在剩余预算里沿**余弦**曲线降到 lr/10"
        "（步数或时间，以先用完者为准；*s* 是预算已用掉的比例）。梯度的总长度被限制在 1 以内（梯度裁剪）。"
    ),
    "training.lr.caption.lm": (
        "“{task}”的计划：{steps} 步，warmup = {warmup}，lr = {lr}。如果时间上限先到，余弦也会提前结束。"
        "用这些设置训练一次之后，图中的点就是那次训练实际使用的学习率。"
    ),
    "training.compare.lm": (
        "语言模型没有源句子，也没有交叉注意力，所以这里没有可比较的网格：请打开“{page}”页面，"
        "点击“{button}”，找出你训练的模型长出的归纳头。"
    ),
    "training.badge.session_lm": "权重：本会话中训练的小 GPT（{steps} 步，测试集困惑度 {ppl}）",
    "training.fig.pm_title": "最佳前缀匹配分数",
    "training.fig.ppl_title": "验证集困惑度",
    "training.fig.val_loss": "验证集损失",
    "training.fig.best_pm": "最佳前缀匹配（所有头中）",
    "training.fig.val_ppl": "验证集困惑度",
}
