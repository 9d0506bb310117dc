"""“完整模型”页（pages/model.py）及其图表（figures/model.py）的文字。

``model.fig.`` 下是图表文字；含 plotly ``%{...}`` 的是悬停模板，原样使用（不代入数值）。
"""

STRINGS = {
    "model.intro": (
        "注意力只是其中一个子层。它的周围还有：残差连接和层归一化、一个前馈网络，"
        "以及最后在整个词表上做的 softmax——解码器每次根据它选出一个词元。"
    ),
    "model.noise": "随机权重：这些数字是真实计算出来的，但图案只是噪声——还没有任何含义。",
    "model.url.invalid": "一个无效的值",
    "model.url.whole": "必须是 {lo} 到 {hi} 之间的整数",
    "model.url.number": "必须是 {lo} 到 {hi} 之间的数",
    "model.url.range": "对当前句子和模型大小，必须在 {lo} 到 {hi} 之间",
    "model.url.ignored": "已忽略网址中的 {key}={raw}（{why}）；改为显示 {value}。",
    "model.spinner.other_norm": "正在运行另一种层归一化位置…",
    "model.spinner.greedy": "正在贪心解码…",
    # the tabs (?model_view=<label>): one section at a time
    "model.tab.residual_ffn": "1–2 · 残差 + 层归一化、前馈网络",
    "model.tab.stream": "3 · 穿过各层",
    "model.tab.output": "4 · 输出概率",
    "model.tab.decoding": "5 · 贪心解码",
    # 1. 残差 + 层归一化
    "model.residual.header": "1 · 残差连接 + 层归一化",
    "model.residual.intro": (
        "每个子层（自注意力、前馈网络）都用同样的方式包裹起来：把它的输出**加**回它的输入"
        "（这条通路叫*残差流*），再由**层归一化**（LayerNorm）把每个向量调整为均值 0、方差 1"
        "（然后乘以可学习的缩放 γ，加上平移 β）。\n\n"
        "可以把残差流想成一个不断累加的和：子层只是在上面加一点修正，所以输入的信息永远不会丢失；"
        "训练时，误差信号也能沿着这条捷径直接传回最前面的层。"
    ),
    "model.residual.post": "**后归一化（post-norm）**（论文第 3.1 节）：对相加之后的和做归一化。",
    "model.residual.pre": "**前归一化（pre-norm）**（后来的模型，例如 GPT-2）：只对分支的输入做归一化。",
    "model.residual.layer": "编码器层",
    "model.residual.token": "源词元（位置）",
    "model.residual.token.help": "选择要在这一层中跟踪哪个词元的向量。",
    "model.residual.caption": "位置 {token} 上那个词元的向量穿过第 {layer} 个编码器层（共 {n} 层，{norm}-norm）的过程。这个词元是：",
    "model.residual.reading": (
        "从上往下读：蓝色行是残差流，橙色行是子层加上去的内容，绿色行是层归一化的输出。"
        "d = {d} 个数的均值为 0、方差为 1，意味着在乘 γ、加 β 之前，向量长度正好是 √{d} = {root}："
        "请留意绿色的条。"
    ),
    # 2. 前馈网络
    "model.ffn.header": "2 · 逐位置前馈网络",
    "model.ffn.relu": (
        "注意力让词元之间交换信息；前馈网络则**单独**处理每一个词元。"
        "同一个两层网络分别作用在每个词元上：d_model = {d_model} → d_ff = {d_ff} → d_model。"
        "热力图显示第 {layer} 个编码器层的隐藏层 max(0, xW₁ + b₁)；白色格子是被 ReLU 关掉的单元（恰好为 0）。"
    ),
    "model.ffn.gelu": (
        "注意力让词元之间交换信息；前馈网络则**单独**处理每一个词元："
        "d_model = {d_model} → d_ff = {d_ff} → d_model，每个词元用的是同一个网络。"
        "这个模型（和 BERT 一样）用 GELU 代替论文中的 ReLU：GELU 是一个平滑版的 ReLU，"
        "会让较小的负值通过（Φ(z) 是一个标准正态随机数不超过 z 的概率）。热力图显示第 {layer} 个编码器层的 GELU(xW₁ + b₁)（橙色为负，蓝色为正）。"
    ),
    "model.ffn.metric": "被关掉的隐藏单元（恰好为 0）",
    "model.ffn.metric.help": "在 词元数 × d_ff 个隐藏激活值中，恰好为 0 的比例。",
    "model.ffn.random_half": "随机权重下大约一半的单元被关掉：xW₁ + b₁ 的取值关于 0 对称。",
    "model.ffn.gelu_zero": "GELU 只有在输入恰好为 0 时才输出 0：它把负的输入压向 0，而不是直接截断。",
    "model.ffn.part": (
        "{n} 个词元 × {d_ff} 个单元的格子太多，无法全部画出：热力图只显示前 {units} 个单元"
        "（放大即可看清单个格子）。"
    ),
    # 3. 残差流穿过各层
    "model.stream.header": "3 · 残差流穿过各层：后归一化与前归一化",
    "model.stream.intro": (
        "把同样的观察扩展到整个编码器：每经过半层，词元向量的平均长度 ‖x‖ 是多少。"
        "**后归一化**时每个子层都以层归一化结束，在学到的缩放 γ 和平移 β 之前把长度拉回到 √d_model（虚线）；训练好的权重会让 γ、β 离开 1 和 0。"
        "**前归一化**时层归一化只作用于分支的输入，所以残差流本身会越来越长。"
    ),
    "model.stream.trained": (
        "训练好的权重：层归一化的位置由检查点决定（{norm}-norm）。"
        "在侧边栏切换到随机权重，就能并排比较后归一化和前归一化。"
    ),
    "model.stream.pretrained": (
        "预训练权重：层归一化的位置由模型决定（{norm}-norm，与论文相同）。"
        "它学到的 γ 不一定让长度保持在 √d_model。在侧边栏切换到随机权重，就能并排比较后归一化和前归一化。"
    ),
    "model.stream.random": (
        "同一组随机权重（种子 {seed}），层归一化分别放在每个子层之后（post）和之前（pre）。"
        "后归一化在每个子层之后都把残差流拉回到大约 √d_model；前归一化则不断往上累加，"
        "所以层数越多，向量越长（试试 6 层）。"
    ),
    "model.stream.final_norm": (
        "最后一步“层归一化 → memory”是编码器最后的那次层归一化，只在最后一层之后做一次："
        "这是 torch.nn.Transformer 和 Annotated Transformer 的约定，这个模型也采用了。"
        "前置归一化需要它（否则残差流从来不会被归一化）；论文中的后置归一化模型没有这一步，"
        "那里 memory 就是最后一层的输出。"
    ),
    # 4. 输出概率
    "model.output.header": "4 · 输出概率",
    "model.encoder_only": (
        "{model} 只有编码器：它没有解码器，也没有输出层，所以既没有下一个词元的概率，也没有可解码的内容（第 4–5 节）。"
        "下面的标签页展示的是它的编码器。在侧边栏选择随机权重或训练好的权重，即可看到解码器如何工作。"
    ),
    "model.output.intro": (
        "解码器在位置 *i* 的最后一个向量先经过一个线性层（给每个目标词元打一个分数，称为 *logit*），"
        "再经过 softmax：softmax 能把任意一组分数变成加起来等于 1 的正数。"
        "logit 先除以温度 *T*：*T* < 1 让分布更尖锐，*T* > 1 让分布更平坦。"
        "**贪心解码取概率最大者（argmax），任何温度都不会改变它**；采样则按这些条形的概率抽取，"
        "所以结果取决于 *T*。"
    ),
    "model.output.position": "解码器位置",
    "model.output.topk": "显示概率最高的前 k 个词元",
    "model.output.temperature": "温度 T",
    "model.output.reads.target": "侧边栏中给出的目标句子（教师强制）",
    "model.output.reads.own": "模型自己贪心解码的输出",
    "model.output.reads.sentence": "句子本身（随机权重：把它自己的输出喂回去没有意义）",
    "model.output.caption": "解码器读入的是{reads}。位置 {position} 已经看到下面这些词元，并据此给出下一个词元：",
    # 5. 贪心解码
    "model.greedy.header": "5 · 贪心解码，一步一步来",
    "model.greedy.intro": (
        "解码器一次写出一个词元。它从 [BOS] 开始；每一步都读入目前已经写出的全部内容"
        "（以及编码器的记忆 memory），选出概率最大的下一个词元接在后面，直到写出 [EOS] 为止。"
        "论文用的是束搜索（beam search）：它同时保留 4 个最好的未完成输出，而不是只保留最好的一个。"
    ),
    "model.greedy.own": "解码器从 [BOS] 出发，把每次选出的词元作为下一步的输入喂回去。",
    "model.greedy.on_demand_target": "这里按需单独解码（侧边栏给出了目标句子，所以其他视图用的是教师强制）。",
    "model.greedy.on_demand_random": "这里按需单独解码（侧边栏选的是随机权重，所以其他视图读入的是句子本身）。",
    "model.greedy.noise": "随机权重：未经训练的模型输出的是噪声（常常是同一个词元不断重复）。",
    "model.greedy.capped": "这里解码 {steps} 步后停止（每一步都要保存完整的记录，再多内存就放不下了）。",
    "model.greedy.step": "第 t 步",
    "model.greedy.step.help": "第 t 步根据前缀 [BOS] y₁ … yₜ₋₁ 生成第 t 个词元。",
    "model.greedy.head": "交叉注意力的头（0 = {h} 个头的平均）",
    "model.greedy.prefix": "第 {step} 步（共 {n} 步）：目前为止的前缀",
    "model.greedy.chosen": "选出的（概率最大的）下一个词元",
    "model.greedy.bars_title": "第 {step} 步的下一个词元（T = 1）",
    "model.greedy.heads_mean": "各头的平均",
    "model.greedy.head_no": "第 {head} 个头",
    "model.greedy.cross_caption": "第 {step} 步、最后一个解码器层的交叉注意力（{which}）：行 = 目前为止的解码器位置，列 = 源词元",
    "model.greedy.rows": "每一行是这一步中的一个解码器位置；最后一行就是选出这个词元的那一行。",
    "model.greedy.diagonal": "训练好的 汉字→拼音 模型会看着它正在念的那个字：呈现一条对角线。",
    "model.greedy.output.header": "解码结果",
    "model.greedy.source": "源词元（{n} 个；未知字符显示为 [UNK]）",
    "model.greedy.output": "贪心解码输出（{n} 个词元）",
    "model.greedy.output_eos": "贪心解码输出（{n} 个词元，在 [EOS] 处停止）",
    "model.greedy.nothing": "（[EOS] 之前没有任何内容）",
    # figures/model.py
    "model.fig.stage.input": "x（层的输入）",
    "model.fig.stage.output": "{formula}（输出）",
    "model.fig.kind.stream": "残差流",
    "model.fig.kind.sublayer": "子层输出",
    "model.fig.kind.normed": "层归一化之后",
    "model.fig.residual.length": "长度 ‖v‖",
    "model.fig.residual.dims": "{d} 维中的前 {dims} 维",
    "model.fig.value": "数值",
    "model.fig.dimension": "维度",
    "model.fig.weight": "权重",
    "model.fig.probability": "概率",
    "model.fig.stream.embedded": "嵌入",
    "model.fig.stream.attn": "第{i}层 注意力",
    "model.fig.stream.ffn": "第{i}层 FFN",
    "model.fig.stream.memory": "记忆 memory",
    "model.fig.stream.memory_norm": "层归一化 → 记忆 memory",
    "model.fig.stream.line": "{norm}-norm",
    "model.fig.stream.hover": "平均 ‖x‖ = %{y:.4f}<br>最小 %{customdata[0]:.4f}，最大 %{customdata[1]:.4f}",
    "model.fig.stream.x": "编码器，逐个阶段",
    "model.fig.stream.y": "各词元 ‖x‖ 的平均值",
    "model.fig.ffn.hover": "词元 #%{y}<br>单元 %{x}<br>数值 %{z:.4f}",
    "model.fig.ffn.x": "隐藏单元（d_ff = {d_ff}）",
    "model.fig.ffn.x_part": "隐藏单元（d_ff = {d_ff} 中的前 {units} 个）",
    "model.fig.zero.hover": "%{customdata} #%{y}<br>%{x:.1%} 的单元为 0",
    "model.fig.zero.all": "全部：{share}",
    "model.fig.zero.x": "为 0 的单元",
    "model.fig.cross.x": "源词元（记忆 memory）",
    "model.fig.cross.y": "解码器位置",
    "model.fig.blocks": "{title}，按每 {k} 个一组取平均",
}
