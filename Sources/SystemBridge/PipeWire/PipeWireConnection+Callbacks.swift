import AudioGraph
import CPipeWire
import CPipeWireShims

/// Handlers for the C callbacks in `CallbackTables`. All run on the loop thread, lock held.
extension PipeWireConnection {
    func coreDone(id: UInt32, seq: Int32) {
        loop.assertLockHeld()
        guard id == PW_ID_CORE else { return }
        pendingSyncs.removeValue(forKey: seq)?.fulfill(())
    }

    func coreError(id: UInt32, seq: Int32, res: Int32, message: String?) {
        loop.assertLockHeld()
        // Errors about a proxy also reach that proxy's own `error` event; only a core error
        // with -EPIPE means the daemon is gone.
        guard id == PW_ID_CORE, res == -CPipeWire_errno_EPIPE() else { return }
        failEverything(with: .disconnected(message ?? "the daemon closed the connection"), report: true)
    }

    func registryGlobal(id: ObjectID, type: UnsafePointer<CChar>?, version: UInt32, props: UnsafePointer<spa_dict>?) {
        loop.assertLockHeld()
        guard let type, let kind = TrackedKind.allCases.first(where: { strcmp($0.typePointer, type) == 0 }),
            let proxy = CPipeWire_registry_bind(registryPointer, id, kind.typePointer, min(version, kind.clientVersion))
        else { return }
        // Ids are reused at once; a stale entry for this id would be a missed global_remove.
        if let stale = boundObjects.removeValue(forKey: id) { forget(stale) }
        let object = BoundObject(id: id, kind: kind, version: min(version, kind.clientVersion), proxy: OpaquePointer(proxy), connection: self)
        boundObjects[id] = object
        let data = Unmanaged.passUnretained(object).toOpaque()
        let hook = object.handle.hook
        if kind == .link, let link = Self.link(id: id, globalProps: LibPipeWire.properties(props)) {
            // A link's ends come with its global: record it now, so a watcher never sees a
            // stream without links between a new link's global and its info.
            record(.link(link))
        }
        let listening: Int32
        switch kind {
        case .node: listening = CPipeWire_node_add_listener(OpaquePointer(proxy), hook, CallbackTables.node, data)
        case .port: listening = CPipeWire_port_add_listener(OpaquePointer(proxy), hook, CallbackTables.port, data)
        case .link: listening = CPipeWire_link_add_listener(OpaquePointer(proxy), hook, CallbackTables.link, data)
        case .device: listening = CPipeWire_device_add_listener(OpaquePointer(proxy), hook, CallbackTables.device, data)
        case .client: listening = CPipeWire_client_add_listener(OpaquePointer(proxy), hook, CallbackTables.client, data)
        case .metadata:
            // Metadata has no info event: its name comes with the global, its keys follow.
            record(.metadata(Metadata(id: id, props: LibPipeWire.properties(props))))
            listening = CPipeWire_metadata_add_listener(OpaquePointer(proxy), hook, CallbackTables.metadata, data)
        }
        // A proxy nobody listens on only costs memory: without its info events the object
        // stays as its global described it. (add_listener fails only for an interface without
        // the method, which would be a libpipewire mismatch.)
        if checked(listening, "add a listener to \(kind) \(id)") != nil {
            if let object = boundObjects.removeValue(forKey: id) { forget(object) }
        }
    }

    static func link(id: ObjectID, globalProps props: Properties) -> Link? {
        guard let outputNode = props["link.output.node"].flatMap(ObjectID.init),
            let outputPort = props["link.output.port"].flatMap(ObjectID.init),
            let inputNode = props["link.input.node"].flatMap(ObjectID.init),
            let inputPort = props["link.input.port"].flatMap(ObjectID.init)
        else { return nil }
        return Link(id: id, outputNode: outputNode, outputPort: outputPort, inputNode: inputNode, inputPort: inputPort, props: props)
    }

    func registryGlobalRemove(id: ObjectID) {
        loop.assertLockHeld()
        if let object = boundObjects.removeValue(forKey: id) { forget(object) }
        // A stream gone: its proxy on a control channel goes; a client gone: its channel.
        for channel in controlChannels.values { channel.unbind(id) }
        if let channel = controlChannels.removeValue(forKey: id) { channel.close(failing: .noSuchObject(id)) }
        withdrawnMetadataIDs.remove(id)
        record(.removed(id))
    }

    /// Drops a bound object: its proxy, and for a device its params proxy, its reading's
    /// deadline, and its params channel once no device is read there (closing it ends what
    /// PipeWire still waited for on it: a device that never answered and went).
    private func forget(_ object: BoundObject) {
        object.handle.release()
        guard let reader = object.routeReader else { return }
        if let deadline = reader.deadline { loop.deadlines.cancel(deadline) }
        reader.deadline = nil
        if let channel = object.paramsChannel {
            channel.unbind(object.id)
            if channel.devices.isEmpty {
                paramsChannels[channel.exporter] = nil
                channel.close()
            }
        }
        object.paramsChannel = nil
        settleRouteWaitersIfDone()
    }

    func nodeInfo(_ object: BoundObject, _ info: pw_node_info) {
        loop.assertLockHeld()
        var node = graph.nodes[object.id] ?? Node(id: object.id)
        if info.change_mask & UInt64(PW_NODE_CHANGE_MASK_STATE) != 0 { node.state = NodeState(info.state) }
        if info.change_mask & UInt64(PW_NODE_CHANGE_MASK_PROPS) != 0 { node.props = LibPipeWire.properties(info.props) }
        if info.change_mask & UInt64(PW_NODE_CHANGE_MASK_INPUT_PORTS) != 0 { node.inputPorts = Int(info.n_input_ports) }
        if info.change_mask & UInt64(PW_NODE_CHANGE_MASK_OUTPUT_PORTS) != 0 { node.outputPorts = Int(info.n_output_ports) }
        record(.node(node))
        if node.isPlaybackStream, !object.followsProps { followProps(of: object) }
    }

    /// Subscribes to a playback stream's `Props`: the daemon sends them at once, then again
    /// whenever they change (`nodeParam`). Sinks' and devices' params cost nothing: never asked for.
    private func followProps(of object: BoundObject) {
        var ids = [SPA_PARAM_Props.rawValue]
        // A failure leaves the stream's mute unknown (nil), as a pw-dump without Props would.
        guard checked(CPipeWire_node_subscribe_params(object.handle.proxy, &ids, UInt32(ids.count)), "subscribe to the Props of node \(object.id)") == nil
        else { return }
        object.followsProps = true
    }

    /// A Props param of a followed stream: its `mute`, when it has one, goes into the graph (a
    /// change only when it differs). A stream's Props are one object, its converter's (volumes,
    /// mute, settings); should a node send several with a mute, the last sent counts. (The
    /// `index` of a param cannot tell which came first in its list: a client's node numbers all
    /// its params together, and the numbers move as they change.)
    func nodeParam(_ object: BoundObject, id: UInt32, pod: UnsafePointer<spa_pod>?) {
        loop.assertLockHeld()
        guard id == SPA_PARAM_Props.rawValue, object.followsProps, let pod else { return }
        var mute = false
        // Anything else than a Props object with a boolean mute is passed over.
        guard CPipeWire_parse_props_mute(pod, &mute) == 1 else { return }
        guard var node = graph.nodes[object.id], node.mute != mute else { return }
        node.mute = mute
        record(.node(node))
    }

    func portInfo(id: ObjectID, _ info: pw_port_info) {
        loop.assertLockHeld()
        let direction: PortDirection = info.direction == SPA_DIRECTION_INPUT ? .input : .output
        var port = graph.ports[id] ?? Port(id: id, direction: direction)
        port.direction = direction
        if info.change_mask & UInt64(PW_PORT_CHANGE_MASK_PROPS) != 0 { port.props = LibPipeWire.properties(info.props) }
        record(.port(port))
    }

    func linkInfo(id: ObjectID, _ info: pw_link_info) {
        loop.assertLockHeld()
        var link = graph.links[id] ?? Link(
            id: id, outputNode: info.output_node_id, outputPort: info.output_port_id,
            inputNode: info.input_node_id, inputPort: info.input_port_id)
        if info.change_mask & UInt64(PW_LINK_CHANGE_MASK_STATE) != 0 { link.state = LinkState(info.state) }
        if info.change_mask & UInt64(PW_LINK_CHANGE_MASK_PROPS) != 0 { link.props = LibPipeWire.properties(info.props) }
        record(.link(link))
    }

    func deviceInfo(_ object: BoundObject, _ info: pw_device_info) {
        loop.assertLockHeld()
        var device = graph.devices[object.id] ?? Device(id: object.id)
        if info.change_mask & UInt64(PW_DEVICE_CHANGE_MASK_PROPS) != 0 || graph.devices[object.id] == nil {
            device.props = LibPipeWire.properties(info.props)
        }
        record(.device(device))
        guard let reader = object.routeReader else { return }
        let params = reader.changedParams(info)
        guard !params.isEmpty else { return }
        guard !reader.inFlight else {
            reader.stale = true
            return
        }
        readRoutes(of: object, params)
    }

    /// The enumerations, then a round trip, on the device's params channel (never on this
    /// connection: see `DeviceParamsChannel`): the round trip's `done` comes after every param
    /// they send. The reading has a deadline; past it the device is said not to answer, once.
    private func readRoutes(of object: BoundObject, _ params: [UInt32]) {
        guard let reader = object.routeReader, let channel = paramsChannel(for: object), let proxy = channel.proxy(of: object)
        else { return }  // no channel (PipeWire refused a connection): the routes stay unknown
        nextRouteSequence = nextRouteSequence == Int32.max ? 1 : nextRouteSequence + 1
        let sequence = nextRouteSequence
        reader.begin(sequence: sequence)
        for id in params {
            let sent = CPipeWire_device_enum_params(proxy, 0, id)
            guard sent >= 0 else {
                _ = reader.finish(sequence: sequence)
                return settleRouteWaitersIfDone()
            }
            reader.requested(sent)
        }
        let syncSeq = channel.sync()
        guard syncSeq >= 0 else {
            _ = reader.finish(sequence: sequence)
            return settleRouteWaitersIfDone()
        }
        channel.readings[syncSeq] = RouteReading(device: object.id, sequence: sequence)
        let nanoseconds = UInt64(deviceParamsDeadline.components.seconds) * 1_000_000_000
            + UInt64(deviceParamsDeadline.components.attoseconds / 1_000_000_000)
        reader.deadline = loop.deadlines.add(at: LoopDeadlines.now() + nanoseconds) { [weak self, weak object] in
            guard let self, let object else { return }
            self.routeReadingExpired(object, sequence: sequence)
        }
    }

    /// The channel `object`'s params are read on: the one it has, else its exporter's (made
    /// on first use; past `paramsChannelLimit` exporters, the shared one).
    private func paramsChannel(for object: BoundObject) -> DeviceParamsChannel? {
        if let channel = object.paramsChannel { return channel }
        var key = graph.devices[object.id]?.props["client.id"].flatMap { ObjectID($0) }
        if paramsChannels[key] == nil, paramsChannels.keys.filter({ $0 != nil }).count >= Self.paramsChannelLimit { key = nil }
        if let channel = paramsChannels[key] {
            object.paramsChannel = channel
            return channel
        }
        guard let context,
            let channel = DeviceParamsChannel(exporter: key, context: context, remoteName: remoteName, connection: self)
        else { return nil }
        paramsChannels[key] = channel
        object.paramsChannel = channel
        return channel
    }

    /// A round trip on a params channel came back: the reading it ends is complete.
    func paramsDone(_ channel: DeviceParamsChannel, id: UInt32, seq: Int32) {
        loop.assertLockHeld()
        guard id == PW_ID_CORE, let reading = channel.readings.removeValue(forKey: seq) else { return }
        finishRouteReading(reading)
    }

    /// A reading passed its deadline unanswered: said once; it stays in flight (a new one
    /// would only queue behind it), and the graph goes on with what it has.
    private func routeReadingExpired(_ object: BoundObject, sequence: Int32) {
        loop.assertLockHeld()
        guard boundObjects[object.id] === object, let reader = object.routeReader, reader.inFlight, reader.sequence == sequence
        else { return }
        reader.deadline = nil
        reader.silent = true
        let device = graph.devices[object.id]
        eventQueue.append(.notice(.deviceNotAnswering(
            device: object.id, name: device.flatMap(Self.deviceName), exporter: object.paramsChannel?.exporter,
            waited: deviceParamsDeadline)))
        settleRouteWaitersIfDone()
    }

    /// A device's routes are all in: the device changes with them; if they changed again
    /// meanwhile, they are read once more.
    private func finishRouteReading(_ reading: RouteReading) {
        guard let object = boundObjects[reading.device], let reader = object.routeReader,
            let routes = reader.finish(sequence: reading.sequence)
        else { return }
        if let deadline = reader.deadline { loop.deadlines.cancel(deadline) }
        reader.deadline = nil
        if var device = graph.devices[reading.device] {
            device.routes = routes
            record(.device(device))
            if reader.silent {
                eventQueue.append(.notice(.deviceAnswered(device: reading.device, name: Self.deviceName(device))))
            }
        }
        reader.silent = false
        if reader.stale { readRoutes(of: object, reader.readableParams) }
        settleRouteWaitersIfDone()
    }

    static func deviceName(_ device: Device) -> String? {
        device.props["device.name"] ?? device.props["device.description"]
    }

    /// Whether a route reading is in flight and not yet past its deadline.
    var routeReadingsAwaited: Bool {
        boundObjects.values.contains { $0.routeReader.map { $0.inFlight && !$0.silent } ?? false }
    }

    private func settleRouteWaitersIfDone() {
        guard !routesSettledWaiters.isEmpty, !routeReadingsAwaited else { return }
        for waiter in routesSettledWaiters { waiter.fulfill(()) }
        routesSettledWaiters.removeAll()
    }

    func clientInfo(id: ObjectID, props: UnsafeMutablePointer<spa_dict>?) {
        loop.assertLockHeld()
        record(.client(Client(id: id, props: LibPipeWire.properties(props))))
    }

    func metadataProperty(id: ObjectID, subject: UInt32, key: String?, type: String?, value: String?) {
        loop.assertLockHeld()
        record(.metadataProperty(metadata: id, subject: subject, key: key, type: type, value: value))
    }

    func createdBound(_ object: CreatedObject, globalID: UInt32) {
        loop.assertLockHeld()
        object.globalID = globalID
        object.bound.fulfill(globalID)
    }

    func createdRemoved(_ object: CreatedObject) {
        loop.assertLockHeld()
        // The daemon destroyed the object (someone else removed the link): drop our proxy.
        releaseCreated(object)
    }

    func createdFailed(_ object: CreatedObject, res: Int32, message: String?) {
        loop.assertLockHeld()
        object.bound.fail(.requestFailed(operation: object.description, code: res, message: message ?? "error"))
    }
}

extension NodeState {
    init?(_ state: pw_node_state) {
        switch state {
        case PW_NODE_STATE_ERROR: self = .error
        case PW_NODE_STATE_CREATING: self = .creating
        case PW_NODE_STATE_SUSPENDED: self = .suspended
        case PW_NODE_STATE_IDLE: self = .idle
        case PW_NODE_STATE_RUNNING: self = .running
        default: return nil
        }
    }
}

extension LinkState {
    init?(_ state: pw_link_state) {
        switch state {
        case PW_LINK_STATE_ERROR: self = .error
        case PW_LINK_STATE_UNLINKED: self = .unlinked
        case PW_LINK_STATE_INIT: self = .`init`
        case PW_LINK_STATE_NEGOTIATING: self = .negotiating
        case PW_LINK_STATE_ALLOCATING: self = .allocating
        case PW_LINK_STATE_PAUSED: self = .paused
        case PW_LINK_STATE_ACTIVE: self = .active
        default: return nil
        }
    }
}
