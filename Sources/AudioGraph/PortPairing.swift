/// Which output port feeds which input port when one node is linked to another.
public struct PortPair: Sendable, Hashable {
    public var output: Port
    public var input: Port
}

extension Graph {
    /// Pairs `from`'s output ports with `to`'s input ports by channel position (FL→FL…), as
    /// the link factory needs port ids. A mono side is fanned out/in; two sides without
    /// channel names but with equal port counts pair in port order. Empty when nothing fits.
    public func portPairs(from output: ObjectID, to input: ObjectID) -> [PortPair] {
        var outputs = ports(of: output, direction: .output)
        // A sink's monitor ports are outputs too; use them only when there is nothing else.
        if outputs.contains(where: { !$0.isMonitor }) { outputs.removeAll(where: \.isMonitor) }
        let inputs = ports(of: input, direction: .input)
        guard !outputs.isEmpty, !inputs.isEmpty else { return [] }

        var pairs: [PortPair] = []
        for source in outputs {
            for target in inputs where source.channel != nil && source.channel == target.channel {
                pairs.append(PortPair(output: source, input: target))
            }
        }
        if !pairs.isEmpty { return pairs }
        if outputs.count == 1 { return inputs.map { PortPair(output: outputs[0], input: $0) } }
        if inputs.count == 1 { return outputs.map { PortPair(output: $0, input: inputs[0]) } }
        guard outputs.count == inputs.count else { return [] }
        return zip(outputs, inputs).map { PortPair(output: $0, input: $1) }
    }
}
