import VFXCore
import VFXNeuralKernels

extension ProgramBuilder {
    /// Folds, fuses or adds one operator as a step, after checking its tensors and shapes.
    func buildOperator(_ op: TFLiteOperator, state: inout BuildState) throws {
        guard op.outputs.count == 1 else { throw ModelError("operators with \(op.outputs.count) outputs are not supported") }
        let output = op.outputs[0]
        let folds = op.code.builtin == BuiltinOperator.dequantize || op.code.builtin == BuiltinOperator.densify
        guard folds || model.tensors[output].type == .float32 else {
            throw ModelError("output '\(name(output))' is not float32")
        }
        guard !state.available.contains(output), state.constants[output] == nil else {
            throw ModelError("tensor '\(name(output))' is written twice")
        }
        func input(_ index: Int) throws -> Int {
            guard index < op.inputs.count, op.inputs[index] >= 0 else { throw ModelError("missing input \(index)") }
            return op.inputs[index]
        }
        func add(_ step: Step) {
            state.steps.append(step)
            state.available.insert(output)
            state.producer[output] = state.steps.count - 1
        }
        let code = op.code
        switch code.builtin {
        case BuiltinOperator.dequantize:
            let source = try input(0)
            let values = try state.constants[source] ?? storedFloats(source, expected: count(source))
            guard values.count == count(output) else { throw ModelError("DEQUANTIZE of a non-constant is not supported") }
            state.constants[output] = values

        case BuiltinOperator.densify:
            let source = try input(0)
            guard let sparsity = model.tensors[source].sparsity else { throw ModelError("DENSIFY input is not sparse") }
            let dense = try densify(values: storedFloats(source, expected: nil), shape: shape(source), sparsity: sparsity)
            guard dense.count == count(output) else { throw ModelError("DENSIFY output size does not match") }
            state.constants[output] = dense

        case BuiltinOperator.conv2D, BuiltinOperator.depthwiseConv2D:
            let depthwise = code.builtin == BuiltinOperator.depthwiseConv2D
            var source = try runtime(input(0), &state)
            var (height, width, channels) = try image(source)
            let filterShape = shape(try input(1))
            guard filterShape.count == 4 else { throw ModelError("filter must be 4-D, is \(filterShape)") }
            let kh = filterShape[1], kw = filterShape[2]
            let outChannels = depthwise ? filterShape[3] : filterShape[0]
            guard depthwise ? (filterShape[0] == 1 && outChannels == channels) : filterShape[3] == channels else {
                throw ModelError("filter \(filterShape) does not fit input of \(channels) channels")
            }
            let weights = try floatConstant(input(1), state)
            let biasValues = try bias(op, index: 2, channels: outChannels, state)
            // Conv2DOptions: 0 padding, 1 stride_w, 2 stride_h, 3 activation, 4/5 dilation w/h.
            // DepthwiseConv2DOptions: 0 padding, 1 stride_w, 2 stride_h, 3 depth_multiplier, 4 activation, 5/6 dilation.
            let same = try op.option(0, default: Int8(0)) == 0
            let strideX = Int(try op.option(1, default: Int32(1))), strideY = Int(try op.option(2, default: Int32(1)))
            let activation = try Activation(code: op.option(depthwise ? 4 : 3, default: Int8(0)))
            let dilation = (try op.option(depthwise ? 5 : 4, default: Int32(1)), try op.option(depthwise ? 6 : 5, default: Int32(1)))
            guard dilation == (1, 1) else { throw ModelError("dilated convolutions are not supported") }
            guard strideX >= 1, strideY >= 1, strideX <= 64, strideY <= 64 else { throw ModelError("bad strides") }
            let vertical = try WindowGeometry.axis(input: height, kernel: kh, stride: strideY, same: same)
            let horizontal = try WindowGeometry.axis(input: width, kernel: kw, stride: strideX, same: same)
            try expectShape(output, [1, vertical.output, horizontal.output, outChannels])
            var padTop = vertical.padBefore, padLeft = horizontal.padBefore
            // A zero PAD of only height and width before a VALID convolution becomes the convolution's padding.
            if !same, let pad = state.pads[source], state.consumers[source] == 1, !state.graphOutputs.contains(source) {
                state.steps[pad.step].removed = true
                padTop = pad.before[1]
                padLeft = pad.before[2]
                source = pad.source
                (height, width, channels) = try image(source)
            }
            let geometry = WindowGeometry(inputHeight: height, inputWidth: width, inputChannels: channels,
                                          outputHeight: vertical.output, outputWidth: horizontal.output,
                                          outputChannels: outChannels, kernelHeight: kh, kernelWidth: kw,
                                          strideY: strideY, strideX: strideX, padTop: padTop, padLeft: padLeft)
            let kernels = self.kernels, parallel = SliceRunner(threads: threads)
            state.multiplyAdds += vertical.output * horizontal.output * outChannels * kh * kw * (depthwise ? 1 : channels)
            if depthwise {
                add(Step(inputs: [source], output: output, activation: activation) { i, o, _, a in
                    DepthwiseConvolutionLayer(kernels: kernels, parallel: parallel, input: i[0], output: o,
                                              geometry: geometry, weights: weights, bias: biasValues, activation: a)
                })
            } else if kh == 1 && kw == 1 && strideX == 1 && strideY == 1 && padTop == 0 && padLeft == 0
                        && geometry.outputHeight == height && geometry.outputWidth == width {
                add(Step(inputs: [source], output: output, activation: activation, acceptsResidual: true) { i, o, _, a in
                    MatrixMultiplyLayer(kernels: kernels, parallel: parallel, input: i[0], residual: i.count > 1 ? i[1] : nil,
                                        output: o, rows: height * width, depth: channels, columns: outChannels,
                                        weights: weights, bias: biasValues, activation: a)
                })
            } else {
                add(Step(inputs: [source], output: output,
                         scratch: ConvolutionLayer.scratchCount(geometry, threads: threads), activation: activation) {
                    i, o, s, a in
                    ConvolutionLayer(kernels: kernels, parallel: parallel, input: i[0], output: o, scratch: s,
                                     geometry: geometry, weights: weights, bias: biasValues, activation: a)
                })
            }

        case BuiltinOperator.fullyConnected:
            let source = try runtime(input(0), &state)
            let filterShape = shape(try input(1))
            guard filterShape.count == 2, filterShape[1] > 0 else { throw ModelError("weights must be 2-D, are \(filterShape)") }
            let (columns, depth) = (filterShape[0], filterShape[1])
            guard count(source) % depth == 0 else { throw ModelError("input does not divide into rows of \(depth)") }
            let rows = count(source) / depth
            guard count(output) == rows * columns else { throw ModelError("output size is not \(rows)×\(columns)") }
            // FullyConnectedOptions: 0 activation, 1 weights_format (0 = default), 2 keep_num_dims.
            guard try op.option(1, default: Int8(0)) == 0 else { throw ModelError("shuffled weights are not supported") }
            let activation = try Activation(code: op.option(0, default: Int8(0)))
            let weights = try floatConstant(input(1), state)
            let biasValues = try bias(op, index: 2, channels: columns, state)
            let kernels = self.kernels
            state.multiplyAdds += rows * columns * depth
            add(Step(inputs: [source], output: output, activation: activation) { i, o, _, a in
                MatrixMultiplyLayer(kernels: kernels, input: i[0], output: o, rows: rows, depth: depth, columns: columns,
                                    weights: weights, bias: biasValues, activation: a)
            })

        case BuiltinOperator.add, BuiltinOperator.mul:
            var first = try runtime(input(0), &state), second = try runtime(input(1), &state)
            var a = try rank4(shape(first)), b = try rank4(shape(second))
            let out = try rank4(shape(output))
            for axis in 0..<4 {
                let expected = a[axis] == 1 ? b[axis] : a[axis]
                guard (a[axis] == b[axis] || a[axis] == 1 || b[axis] == 1), out[axis] == expected else {
                    throw ModelError("shapes \(shape(first)) and \(shape(second)) do not broadcast to \(shape(output))")
                }
            }
            let total = count(output)
            if count(first) != total && count(second) == total {
                swap(&first, &second)
                swap(&a, &b)
            }
            let broadcast: BinaryLayer.Broadcast
            if count(first) == total && count(second) == total {
                broadcast = .none
            } else if count(first) == total && count(second) == 1 {
                broadcast = .scalar
            } else if count(first) == total && b[0] == 1 && b[1] == 1 && b[2] == 1 && b[3] == out[3] {
                broadcast = .channels(out[3])
            } else {
                func strides(_ s: [Int]) -> [Int] {
                    let dense = [s[1] * s[2] * s[3], s[2] * s[3], s[3], 1]
                    return (0..<4).map { s[$0] == 1 ? 0 : dense[$0] }
                }
                broadcast = .general(shape: out, first: strides(a), second: strides(b))
            }
            let operation: BinaryLayer.Operation = code.builtin == BuiltinOperator.add ? .add : .multiply
            let activation = try Activation(code: op.option(0, default: Int8(0)))
            // A residual ADD after a 1×1 convolution becomes part of it: the convolution starts its sums from
            // the other operand, which must be computed before the convolution runs.
            for (product, residual) in [(first, second), (second, first)] where operation == .add && broadcast == .none {
                guard let index = state.producer[product], state.steps[index].acceptsResidual,
                      state.steps[index].activation == Activation.none, state.steps[index].inputs.count == 1,
                      !state.steps[index].removed, state.consumers[product] == 1,
                      !state.graphOutputs.contains(product), state.producer[residual].map({ $0 < index }) ?? true
                else { continue }
                state.steps[index].inputs.append(residual)
                state.steps[index].activation = activation
                state.steps[index].output = output
                state.available.insert(output)
                state.producer[output] = index
                return
            }
            add(Step(inputs: [first, second], output: output, activation: activation) { i, o, _, a in
                BinaryLayer(operation: operation, first: i[0], second: i[1], output: o, count: total,
                            broadcast: broadcast, activation: a)
            })

        case BuiltinOperator.relu, BuiltinOperator.relu6:
            let source = try runtime(input(0), &state)
            guard count(source) == count(output) else { throw ModelError("input and output sizes differ") }
            let clamp: Activation = code.builtin == BuiltinOperator.relu ? .relu : .relu6
            if let index = state.producer[source], state.steps[index].activation != nil, state.consumers[source] == 1,
               !state.graphOutputs.contains(source), !state.steps[index].removed {
                state.steps[index].activation = state.steps[index].activation?.followed(by: clamp)
                state.steps[index].output = output
                state.available.insert(output)
                state.producer[output] = index
                return
            }
            let total = count(output)
            add(Step(inputs: [source], output: output) { i, o, _, _ in
                ActivationLayer(function: .clamp(clamp), input: i[0], output: o, count: total)
            })

        case BuiltinOperator.hardSwish, BuiltinOperator.logistic:
            let source = try runtime(input(0), &state)
            guard count(source) == count(output) else { throw ModelError("input and output sizes differ") }
            let function: ActivationLayer.Function = code.builtin == BuiltinOperator.hardSwish ? .hardSwish : .logistic
            let total = count(output)
            add(Step(inputs: [source], output: output) { i, o, _, _ in
                ActivationLayer(function: function, input: i[0], output: o, count: total)
            })

        case BuiltinOperator.prelu:
            let source = try runtime(input(0), &state)
            let slopes = try floatConstant(input(1), state)
            let channels = shape(source).last ?? 1
            guard slopes.count == channels, shape(output) == shape(source), count(source) % max(channels, 1) == 0 else {
                throw ModelError("PRELU needs one slope per channel")
            }
            let total = count(output)
            add(Step(inputs: [source], output: output) { i, o, _, _ in
                PReLULayer(input: i[0], output: o, count: total, slopes: slopes)
            })

        case BuiltinOperator.pad:
            let source = try runtime(input(0), &state)
            let inputShape = try rank4(shape(source))
            let paddings = try intConstant(input(1))
            let rank = shape(source).count
            guard paddings.count == 2 * rank, paddings.allSatisfy({ $0 >= 0 && $0 <= 1 << 16 }) else {
                throw ModelError("paddings must be \(rank)×2 non-negative values")
            }
            let lead = 4 - rank
            let before = (0..<4).map { $0 < lead ? 0 : paddings[2 * ($0 - lead)] }
            let after = (0..<4).map { $0 < lead ? 0 : paddings[2 * ($0 - lead) + 1] }
            let outputShape = (0..<4).map { inputShape[$0] + before[$0] + after[$0] }
            guard try rank4(shape(output)) == outputShape else { throw ModelError("output shape does not match the padding") }
            add(Step(inputs: [source], output: output) { i, o, _, _ in
                PadLayer(input: i[0], output: o, inputShape: inputShape, outputShape: outputShape, before: before)
            })
            if before[0] == 0, after[0] == 0, before[3] == 0, after[3] == 0, rank == 4 {
                state.pads[output] = PendingPad(step: state.steps.count - 1, source: source, before: before)
            }

        case BuiltinOperator.maxPool2D, BuiltinOperator.averagePool2D:
            let source = try runtime(input(0), &state)
            let (height, width, channels) = try image(source)
            // Pool2DOptions: 0 padding, 1 stride_w, 2 stride_h, 3 filter_width, 4 filter_height, 5 activation.
            let same = try op.option(0, default: Int8(0)) == 0
            let strideX = Int(try op.option(1, default: Int32(1))), strideY = Int(try op.option(2, default: Int32(1)))
            let kw = Int(try op.option(3, default: Int32(1))), kh = Int(try op.option(4, default: Int32(1)))
            guard kw >= 1, kh >= 1, kw <= 4096, kh <= 4096, strideX <= 4096, strideY <= 4096 else {
                throw ModelError("bad pooling window")
            }
            let activation = try Activation(code: op.option(5, default: Int8(0)))
            let vertical = try WindowGeometry.axis(input: height, kernel: kh, stride: strideY, same: same)
            let horizontal = try WindowGeometry.axis(input: width, kernel: kw, stride: strideX, same: same)
            try expectShape(output, [1, vertical.output, horizontal.output, channels])
            let geometry = WindowGeometry(inputHeight: height, inputWidth: width, inputChannels: channels,
                                          outputHeight: vertical.output, outputWidth: horizontal.output,
                                          outputChannels: channels, kernelHeight: kh, kernelWidth: kw, strideY: strideY,
                                          strideX: strideX, padTop: vertical.padBefore, padLeft: horizontal.padBefore)
            let kind: PoolingLayer.Kind = code.builtin == BuiltinOperator.maxPool2D ? .maximum : .average
            add(Step(inputs: [source], output: output) { i, o, _, _ in
                PoolingLayer(kind: kind, input: i[0], output: o, geometry: geometry, activation: activation)
            })

        case BuiltinOperator.mean:
            let source = try runtime(input(0), &state)
            let rank = shape(source).count
            let inputShape = try rank4(shape(source))
            let axes = try intConstant(input(1))
            var reduced = Set<Int>()
            for axis in axes {
                guard axis >= -rank, axis < rank else { throw ModelError("axis \(axis) is out of range") }
                reduced.insert((axis + rank) % rank + 4 - rank)
            }
            let kept = (0..<4).filter { !reduced.contains($0) }.reduce(1) { $0 * inputShape[$1] }
            guard count(output) == kept else { throw ModelError("output size does not match the reduction") }
            add(Step(inputs: [source], output: output) { i, o, _, _ in
                MeanLayer(input: i[0], output: o, shape: inputShape, reduced: reduced)
            })

        case BuiltinOperator.reshape:
            let source = try runtime(input(0), &state)
            guard count(source) == count(output) else { throw ModelError("RESHAPE changes the element count") }
            add(Step(inputs: [source], output: output, aliasesInput: true) { _, _, _, _ in nil })

        case BuiltinOperator.concatenation:
            let sources = try op.inputs.map { tensor throws -> Int in
                guard tensor >= 0 else { throw ModelError("missing input") }
                return try runtime(tensor, &state)
            }
            let outputShape = shape(output)
            let rank = outputShape.count
            var axis = Int(try op.option(0, default: Int32(0)))
            guard axis >= -rank, axis < rank, !sources.isEmpty else { throw ModelError("bad axis \(axis)") }
            axis = (axis + rank) % rank
            var total = 0
            for source in sources {
                let s = shape(source)
                guard s.count == rank, (0..<rank).allSatisfy({ $0 == axis || s[$0] == outputShape[$0] }) else {
                    throw ModelError("input shape \(s) does not fit output \(outputShape)")
                }
                total += s[axis]
            }
            guard total == outputShape[axis] else { throw ModelError("inputs do not add up to the output along axis \(axis)") }
            let outer = outputShape[..<axis].reduce(1, *)
            let runs = sources.map { shape($0)[axis...].reduce(1, *) }
            let activation = try Activation(code: op.option(1, default: Int8(0)))
            add(Step(inputs: sources, output: output) { i, o, _, _ in
                ConcatenationLayer(inputs: i, output: o, outer: outer, runs: runs, activation: activation)
            })

        case BuiltinOperator.resizeBilinear:
            let source = try runtime(input(0), &state)
            let (height, width, channels) = try image(source)
            let (outHeight, outWidth, outChannels) = try image(output)
            guard outChannels == channels, height > 0, width > 0 else { throw ModelError("channels differ") }
            // ResizeBilinearOptions: 0/1 deprecated sizes, 2 align_corners, 3 half_pixel_centers.
            let alignCorners = try op.option(2, default: UInt8(0)) != 0
            let halfPixel = try op.option(3, default: UInt8(0)) != 0
            add(Step(inputs: [source], output: output) { i, o, _, _ in
                ResizeBilinearLayer(input: i[0], output: o, inputHeight: height, inputWidth: width, outputHeight: outHeight,
                                    outputWidth: outWidth, channels: channels, alignCorners: alignCorners,
                                    halfPixelCenters: halfPixel)
            })

        case BuiltinOperator.depthToSpace:
            let source = try runtime(input(0), &state)
            let (height, width, channels) = try image(source)
            // DepthToSpaceOptions: 0 block_size.
            let block = Int(try op.option(0, default: Int32(0)))
            guard block >= 1, block <= 64, channels % (block * block) == 0 else { throw ModelError("bad block size \(block)") }
            let outChannels = channels / (block * block)
            try expectShape(output, [1, height * block, width * block, outChannels])
            add(Step(inputs: [source], output: output) { i, o, _, _ in
                DepthToSpaceLayer(input: i[0], output: o, height: height, width: width, block: block,
                                  outputChannels: outChannels)
            })

        case BuiltinOperator.custom where code.custom == "Convolution2DTransposeBias":
            let source = try runtime(input(0), &state)
            let (height, width, channels) = try image(source)
            let filterShape = shape(try input(1))
            guard filterShape.count == 4, filterShape[3] == channels else { throw ModelError("filter \(filterShape) does not fit") }
            let (outChannels, kh, kw) = (filterShape[0], filterShape[1], filterShape[2])
            let (outHeight, outWidth, actualChannels) = try image(output)
            guard actualChannels == outChannels else { throw ModelError("output channels differ from the filter") }
            // Custom options: three little-endian int32: padding (1 same, 2 valid), stride width, stride height.
            let options = model.bytes[op.customOptions]
            guard options.count >= 12 else { throw ModelError("custom options must be 12 bytes") }
            let words = options.withUnsafeBytes { raw in
                (0..<3).map { Int(Int32(littleEndian: raw.loadUnaligned(fromByteOffset: 4 * $0, as: Int32.self))) }
            }
            let (strideX, strideY) = (words[1], words[2])
            guard strideX >= 1, strideY >= 1, strideX <= 64, strideY <= 64, kh >= 1, kw >= 1 else {
                throw ModelError("bad strides or kernel")
            }
            // The padding is that of the forward convolution from the output size back to the input size.
            let vertical = try WindowGeometry.axis(input: outHeight, kernel: kh, stride: strideY, same: words[0] != 2)
            let horizontal = try WindowGeometry.axis(input: outWidth, kernel: kw, stride: strideX, same: words[0] != 2)
            let weights = try floatConstant(input(1), state)
            let biasValues = try bias(op, index: 2, channels: outChannels, state)
            let geometry = WindowGeometry(inputHeight: height, inputWidth: width, inputChannels: channels,
                                          outputHeight: outHeight, outputWidth: outWidth, outputChannels: outChannels,
                                          kernelHeight: kh, kernelWidth: kw, strideY: strideY, strideX: strideX,
                                          padTop: vertical.padBefore, padLeft: horizontal.padBefore)
            state.multiplyAdds += height * width * channels * outChannels * kh * kw
            let kernels = self.kernels
            add(Step(inputs: [source], output: output,
                     scratch: TransposeConvolutionLayer.scratchCount(geometry)) { i, o, s, _ in
                TransposeConvolutionLayer(kernels: kernels, input: i[0], output: o, scratch: s, geometry: geometry,
                                          weights: weights, bias: biasValues)
            })

        default:
            throw ModelError("unsupported operator")
        }
    }

    /// Plans the arena over the steps' lifetimes and creates the layers.
    func finish(_ state: BuildState) throws -> Program {
        let steps = state.steps.filter { !$0.removed }
        // Storage roots: a RESHAPE output lives in its input's storage.
        var root: [Int: Int] = [:]
        func storage(_ tensor: Int) -> Int { root[tensor] ?? tensor }
        var first: [Int: Int] = [:], last: [Int: Int] = [:]
        for tensor in model.inputs { first[tensor] = -1; last[tensor] = -1 }
        for tensor in state.arenaConstants.keys { first[tensor] = -1; last[tensor] = steps.count }
        for (index, step) in steps.enumerated() {
            for input in step.inputs { last[storage(input)] = max(last[storage(input)] ?? index, index) }
            if step.aliasesInput, let input = step.inputs.first {
                root[step.output] = storage(input)
            } else {
                first[step.output] = index
                last[step.output] = max(last[step.output] ?? index, index)
            }
        }
        for tensor in model.outputs {
            guard first[storage(tensor)] != nil else {
                throw ModelError("output '\(name(tensor))' is never computed")
            }
            last[storage(tensor)] = steps.count
        }
        var items = first.keys.map { ArenaItem(id: $0, count: count($0), first: first[$0] ?? 0, last: last[$0] ?? 0) }
        for (index, step) in steps.enumerated() where step.scratch > 0 {
            items.append(ArenaItem(id: -1 - index, count: step.scratch, first: index, last: index))
        }
        let (offsets, size) = planArena(items)
        guard size <= TFLiteFile.maximumElements * 2 else {
            throw ModelError("the intermediate tensors need \(size * 4 / 1_048_576) MiB, more than the 512 MiB allowed")
        }
        let arena = AlignedFloats(count: size + 64)
        for (tensor, values) in state.arenaConstants {
            for (index, value) in values.enumerated() { arena.pointer[(offsets[tensor] ?? 0) + index] = value }
        }
        func offset(_ tensor: Int) -> Int { offsets[storage(tensor)] ?? 0 }
        var layers: [any Layer] = []
        for (index, step) in steps.enumerated() {
            if let layer = step.make(step.inputs.map(offset), offset(step.output), offsets[-1 - index] ?? 0,
                                     step.activation ?? .none) {
                layers.append(layer)
            }
        }
        var operatorCounts: [String: Int] = [:]
        for op in model.operators { operatorCounts[op.code.name, default: 0] += 1 }
        var parameters = 0
        for tensor in model.tensors where tensor.type == .float32 || tensor.type == .float16 {
            let index = tensor.buffer
            if index < model.buffers.count { parameters += model.buffers[index].count / (tensor.type == .float32 ? 4 : 2) }
        }
        let summary = ModelSummary(operatorCounts: operatorCounts, parameterCount: parameters,
                                   multiplyAdds: state.multiplyAdds, tensorCount: model.tensors.count)
        let slot = { (tensor: Int) in Slot(name: name(tensor), shape: shape(tensor), offset: offset(tensor)) }
        for tensor in model.inputs + model.outputs where model.tensors[tensor].type != .float32 {
            throw ModelError("graph tensor '\(name(tensor))' is not float32")
        }
        return Program(inputs: model.inputs.map(slot), outputs: model.outputs.map(slot), layers: layers, arena: arena,
                       summary: summary, kernelName: kernels.name)
    }
}
