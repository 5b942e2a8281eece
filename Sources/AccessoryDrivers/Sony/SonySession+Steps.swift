import RoutingPolicy

/// Start-up steps and wear, in the order a set goes through them.
extension SonySession {
    /// `CONNECT_GET_PROTOCOL_INFO`, fixed value, table 1, sequence 0 (every public capture).
    static let handshakePayload: [UInt8] = [0x00, 0x00]
    static let supportFunctionsPayload: [UInt8] = [0x06, 0x00]
    /// LOG_SET_STATUS: SonyHeadphonesClient sends it last in its v2 start-up; the set then logs
    /// operations (`c9`), wear among them on the WH-1000XM6.
    static let enableLogPayload: [UInt8] = [0xC4, 0x01, 0x00]
    /// Table-2 WEARING_STATUS_CHECKER's support-function id.
    static let wearingStatusCheckerFunction: UInt8 = 0xF0

    mutating func sendHandshake() -> [DriverOutput] {
        handshakesSent += 1
        return [.send(SonyFrame.encode(.table1, seq: 0, payload: Self.handshakePayload))]
    }

    mutating func protocolInfoRead(_ version: SonyProtocolVersion, table2Enabled: Bool) -> [DriverOutput] {
        self.version = version
        self.table2Enabled = version == .v2 && table2Enabled
        stage = .readingSupportFunctions
        // The next command takes the handshake ACK's sequence number (the other one when the
        // ACK was lost).
        queue = SonyCommandQueue(nextSeq: handshakeAckSeq ?? SonyFrame.otherSeq(0))
        var outputs: [DriverOutput] = []
        if version == .v1 {
            outputs += reportWearSupport(.notReported(why: "it speaks MDR v1 (the WH-1000XM3/XM4 kind), for which no public note describes a wear message"))
        }
        return outputs + enqueue(.table1, Self.supportFunctionsPayload, .supportFunctions(.table1))
    }

    /// The support-function list of `table` came (or will not: `ids` empty).
    mutating func supportFunctionsRead(_ table: SonyFrame.Kind, ids: [UInt8]) -> [DriverOutput] {
        functions[table] = Set(ids)
        if table == .table1, table2Enabled {
            return enqueue(.table2, Self.supportFunctionsPayload, .supportFunctions(.table2))
        }
        return finishStartUp()
    }

    /// Batteries, the operation log (v2), then wear: last, so its answer wait overlaps nothing.
    private mutating func finishStartUp() -> [DriverOutput] {
        stage = .running
        // A list can end start-up while the other table's is awaited (a hostile set answers on
        // the wrong table): that wait is over too, or its deadline would start up again.
        if case .supportFunctions = awaiting { awaiting = nil }
        let version = self.version ?? .v2
        if version == .v2 {
            wearMethod = functions[.table2]?.contains(Self.wearingStatusCheckerFunction) == true ? .table2Checker : .table1Status
        }
        var outputs: [DriverOutput] = []
        for payload in SonyBatteryRequests.payloads(version: version, functions: functions[.table1] ?? [], form: form) {
            outputs += enqueue(.table1, payload, .battery)
        }
        if version == .v2 { outputs += enqueue(.table1, Self.enableLogPayload, .enableLog) }
        return outputs + requestWear()
    }

    mutating func enqueue(_ table: SonyFrame.Kind, _ payload: [UInt8], _ purpose: SonyCommandQueue.Purpose) -> [DriverOutput] {
        let (frame, accepted) = queue.enqueue(.init(table: table, payload: payload, purpose: purpose))
        if !accepted {
            return noted(key: 0x3_0004, "Sony: command queue full; dropped a command (counted from now on, not logged)")
        }
        return frame.map { [.send($0)] } ?? []
    }

    /// Reads wear with the method in use. At most one read is queued or awaited at a time; a log
    /// push meanwhile is remembered as one more read after it (bounded).
    mutating func requestWear() -> [DriverOutput] {
        guard let wearMethod else { return [] }
        if queue.holds(.wear) || awaiting == .wear {
            wearRereadWanted = true
            return []
        }
        wearStatusDue = true
        return enqueue(wearMethod.table, wearMethod.request, .wear)
    }

    /// A wear status, asked for or pushed, on either table: the set reports wear.
    mutating func wearRead(_ reading: SonyWearReading) -> [DriverOutput] {
        if reading.isUnknownCode { counters.unknownValues += 1 }
        wearStatusDue = false
        var outputs = reportWearSupport(.reported(how: reading.method.rawValue))
        let sides = reading.sides
        self.sides = sides
        if let placement = reading.placement(form: form, rule: rule), let changed = placementFilter.changed(placement) {
            outputs.append(.placement(changed))
        }
        if awaiting == .wear {
            awaiting = nil
            outputs += rereadIfWanted()
        }
        return outputs
    }

    /// No wear status came for a read (`acknowledged`: the set ACKed the request).
    mutating func wearUnanswered(acknowledged: Bool) -> [DriverOutput] {
        wearStatusDue = false
        if awaiting == .wear { awaiting = nil }
        var outputs: [DriverOutput] = []
        if wearSupportFilter.last == nil {
            let method = wearMethod.map { "the \($0.rawValue) request (\(PacketLogLine.hexPairs($0.request)))" } ?? "the wear request"
            let why =
                acknowledged
                ? "it acknowledged \(method) but sent no wear status within \(Self.wearAnswerWait)"
                : "it did not acknowledge \(method)"
            outputs += reportWearSupport(.notReported(why: why))
        } else {
            outputs += noted(key: 0x3_0005, "Sony: a wear read got no answer (counted from now on, not logged)")
        }
        return outputs + rereadIfWanted()
    }

    mutating func rereadIfWanted() -> [DriverOutput] {
        guard wearRereadWanted else { return [] }
        wearRereadWanted = false
        return requestWear()
    }

    /// Said once it is known, and again only when it changes to reported (a set that stayed
    /// silent at first and pushed later); never back from reported.
    private mutating func reportWearSupport(_ support: WearSupport) -> [DriverOutput] {
        if case .notReported = support, wearSupportFilter.last != nil { return [] }
        if case .reported = wearSupportFilter.last, case .reported = support { return [] }
        return wearSupportFilter.changed(support).map { [.wearSupport($0)] } ?? []
    }
}
