/// Turns score breakdowns and rejections into named terms and sentences. Runs only when a
/// decision is shown, never in the scoring loop.
struct ScoreExplainer {
    let config: PolicyConfig
    let hostAddresses: [HostAddress]

    func explain(_ sink: RankedSink) -> ScoreExplanation {
        let s = sink.score
        let w = config.weights
        var terms: [ScoreTerm] = []
        func weight(_ key: String, _ value: Int64) -> ScoreTerm {
            ScoreTerm(name: "weight", value: value, why: "weights.\(key)\(origin)")
        }
        if s.userOverride != 0 {
            terms.append(ScoreTerm(
                name: "user-override", value: s.userOverride,
                why: "§2.1 the user chose this sink by hand; the override holds until the next placement transition or sink arrival"))
        }
        if s.restorePrevious != 0 {
            terms.append(ScoreTerm(
                name: "restore-previous", value: s.restorePrevious,
                why: "§4 it was the default before the accessory that just came off took the output"))
        }
        if s.worn != 0 {
            let since = s.wornSince.map { " since \($0) ms" } ?? ""
            terms.append(ScoreTerm(
                name: "worn", value: s.worn,
                why: "§2.2 accessory \(s.accessory.map { "\($0)" } ?? "?") is \(s.placement?.rawValue ?? "worn")\(since); recency rank \(s.wornRank) of \(s.wornOf) worn (most recent highest)",
                details: [ScoreTerm(name: "rank", value: Int64(s.wornRank), why: "put-on order among worn accessories"), weight("worn", w.worn)]))
        }
        if s.primarySource != 0 {
            terms.append(ScoreTerm(
                name: "primary-source", value: s.primarySource,
                why: "§2.2 its primary source \(s.primarySourceAddress.map(hostAddressWithOrigin) ?? "this host") is this host, not only its secondary"))
        }
        if s.arrival != 0 {
            let at = s.arrivedAt.map { " at \($0) ms" } ?? ""
            terms.append(ScoreTerm(
                name: "arrival", value: s.arrival,
                why: "§2.3 a \(s.sinkClass.rawValue) sink (personal class) that arrived\(at); recency rank \(s.arrivalRank) of \(s.arrivalOf) arrived (most recent highest)",
                details: [ScoreTerm(name: "rank", value: Int64(s.arrivalRank), why: "arrival order among arrived personal sinks"), weight("arrival", w.arrival)]))
        }
        if s.lastChoice != 0 {
            terms.append(ScoreTerm(name: "last-choice", value: s.lastChoice, why: "§2.4 the user's own last choice"))
        }
        if s.rulePriority != 0, s.ruleIndex >= 0 {
            let rule = config.rules[Int(s.ruleIndex)]
            terms.append(ScoreTerm(
                name: "rule-priority", value: s.rulePriority,
                why: "§2.5 rule at \(rule.location?.fileLine ?? "built-in") (\(rule.matches.map(\.description).joined(separator: ", "))) priority \(s.priority)",
                details: [ScoreTerm(name: "priority", value: Int64(s.priority), why: rule.location.map { "rule at \($0.fileLine)" } ?? "rule"), weight("rule-priority", w.rulePriority)]))
        }
        if s.classOrder != 0 {
            terms.append(ScoreTerm(
                name: "class-order", value: s.classOrder,
                why: "§2.6 class \(s.sinkClass.rawValue), \(s.classPlaces) place(s) from the bottom of class-order [\(config.classOrder.map(\.rawValue).joined(separator: ", "))]",
                details: [ScoreTerm(name: "places", value: Int64(s.classPlaces), why: "class-order position from the bottom"), weight("class-order", w.classOrder)]))
        }
        return ScoreExplanation(node: sink.node, total: s.total, terms: terms)
    }

    func why(_ rejection: Rejection) -> String {
        switch rejection {
        case .ignored(let index):
            let rule = config.rules[index]
            return "§1 ignored by the rule at \(rule.location?.fileLine ?? "built-in") (\(rule.matches.map(\.description).joined(separator: ", ")))"
        case .offHead(let identity):
            return "§1 accessory \(identity) has audio-switching and is off-head"
        case .otherHost(let identity, let primary, let secondary):
            let sources = [primary.map { "primary \($0)" }, secondary.map { "secondary \($0)" }].compactMap { $0 }.joined(separator: ", ")
            let hosts = hostAddresses.isEmpty
                ? "no host address is known: set host-addresses, pass --host-address, or let the daemon read BlueZ's adapters"
                : "this host is \(hostAddresses.map(\.description).joined(separator: ", "))"
            return "§1 accessory \(identity) is playing for another host (\(sources); \(hosts))"
        case .manualOnly(let identity, let entry):
            let who = identity.map { "accessory \($0)" }
                ?? "static accessory at \(config.accessories[entry].location?.fileLine ?? "built-in")"
            return "§1 \(who) has no audio-switching: only the user chooses it"
        case .gone:
            return "§1 gone: no such sink in the graph"
        }
    }

    /// `11:22:33:44:55:66 (bluez hci0)`: the address with where the policy learnt it is this host's.
    private func hostAddressWithOrigin(_ address: BluetoothAddress) -> String {
        hostAddresses.first { $0.address == address }?.description ?? address.description
    }

    private var origin: String { config.file.map { " (\($0))" } ?? " (built-in)" }
}
