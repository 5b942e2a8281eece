import AudioGraph
import CPipeWire
import CPipeWireShims

/// The C event tables handed to libpipewire. They must outlive every listener, so they are
/// allocated once and never freed. Every callback runs on the connection's loop thread with
/// the loop lock held; `data` is an unretained pointer to the object that registered it.
enum CallbackTables {
    nonisolated(unsafe) static let core: UnsafeMutablePointer<pw_core_events> = make {
        var events = pw_core_events()
        events.version = UInt32(PW_VERSION_CORE_EVENTS)
        events.done = { data, id, seq in connection(data).coreDone(id: id, seq: seq) }
        events.error = { data, id, seq, res, message in
            connection(data).coreError(id: id, seq: seq, res: res, message: LibPipeWire.string(message))
        }
        return events
    }

    nonisolated(unsafe) static let registry: UnsafeMutablePointer<pw_registry_events> = make {
        var events = pw_registry_events()
        events.version = UInt32(PW_VERSION_REGISTRY_EVENTS)
        events.global = { data, id, _, type, version, props in
            connection(data).registryGlobal(id: id, type: type, version: version, props: props)
        }
        events.global_remove = { data, id in connection(data).registryGlobalRemove(id: id) }
        return events
    }

    nonisolated(unsafe) static let node: UnsafeMutablePointer<pw_node_events> = make {
        var events = pw_node_events()
        events.version = UInt32(PW_VERSION_NODE_EVENTS)
        events.info = { data, info in
            guard let info else { return }
            let object = bound(data)
            object.connection.nodeInfo(object, info.pointee)
        }
        // Only playback streams' Props are subscribed to (`nodeInfo`): nothing else comes here.
        events.param = { data, _, id, _, _, param in
            let object = bound(data)
            object.connection.nodeParam(object, id: id, pod: param)
        }
        return events
    }

    nonisolated(unsafe) static let port: UnsafeMutablePointer<pw_port_events> = make {
        var events = pw_port_events()
        events.version = UInt32(PW_VERSION_PORT_EVENTS)
        events.info = { data, info in
            guard let info else { return }
            let object = bound(data)
            object.connection.portInfo(id: object.id, info.pointee)
        }
        return events
    }

    nonisolated(unsafe) static let link: UnsafeMutablePointer<pw_link_events> = make {
        var events = pw_link_events()
        events.version = UInt32(PW_VERSION_LINK_EVENTS)
        events.info = { data, info in
            guard let info else { return }
            let object = bound(data)
            object.connection.linkInfo(id: object.id, info.pointee)
        }
        return events
    }

    nonisolated(unsafe) static let device: UnsafeMutablePointer<pw_device_events> = make {
        var events = pw_device_events()
        events.version = UInt32(PW_VERSION_DEVICE_EVENTS)
        events.info = { data, info in
            guard let info else { return }
            let object = bound(data)
            object.connection.deviceInfo(object, info.pointee)
        }
        // Its params are read on a `DeviceParamsChannel`, never on this connection.
        return events
    }

    /// The core of a `DeviceParamsChannel`: its round trips end route readings.
    nonisolated(unsafe) static let paramsCore: UnsafeMutablePointer<pw_core_events> = make {
        var events = pw_core_events()
        events.version = UInt32(PW_VERSION_CORE_EVENTS)
        events.done = { data, id, seq in
            let channel = Unmanaged<DeviceParamsChannel>.fromOpaque(data!).takeUnretainedValue()
            channel.connection.paramsDone(channel, id: id, seq: seq)
        }
        return events
    }

    /// The core of a `StreamControlChannel`: its round trips end `setMute`.
    nonisolated(unsafe) static let controlCore: UnsafeMutablePointer<pw_core_events> = make {
        var events = pw_core_events()
        events.version = UInt32(PW_VERSION_CORE_EVENTS)
        events.done = { data, id, seq in
            Unmanaged<StreamControlChannel>.fromOpaque(data!).takeUnretainedValue().done(id: id, seq: seq)
        }
        return events
    }

    /// A device's proxy on a `DeviceParamsChannel`: only its params are read there.
    nonisolated(unsafe) static let paramsDevice: UnsafeMutablePointer<pw_device_events> = make {
        var events = pw_device_events()
        events.version = UInt32(PW_VERSION_DEVICE_EVENTS)
        events.param = { data, seq, id, _, _, param in
            let object = bound(data)
            object.routeReader?.param(sequence: seq, id: id, pod: param)
        }
        return events
    }

    nonisolated(unsafe) static let client: UnsafeMutablePointer<pw_client_events> = make {
        var events = pw_client_events()
        events.version = UInt32(PW_VERSION_CLIENT_EVENTS)
        events.info = { data, info in
            guard let info else { return }
            let object = bound(data)
            object.connection.clientInfo(id: object.id, props: info.pointee.props)
        }
        return events
    }

    nonisolated(unsafe) static let metadata: UnsafeMutablePointer<pw_metadata_events> = make {
        var events = pw_metadata_events()
        events.version = UInt32(PW_VERSION_METADATA_EVENTS)
        events.property = { data, subject, key, type, value in
            let object = bound(data)
            object.connection.metadataProperty(
                id: object.id, subject: subject, key: LibPipeWire.string(key),
                type: LibPipeWire.string(type), value: LibPipeWire.string(value))
            return 0
        }
        return events
    }

    /// A metadata object's second binding (`MetadataReread`): its properties are only collected.
    nonisolated(unsafe) static let metadataReread: UnsafeMutablePointer<pw_metadata_events> = make {
        var events = pw_metadata_events()
        events.version = UInt32(PW_VERSION_METADATA_EVENTS)
        events.property = { data, subject, key, type, value in
            Unmanaged<MetadataReread>.fromOpaque(data!).takeUnretainedValue().property(
                subject: subject, key: LibPipeWire.string(key), type: LibPipeWire.string(type), value: LibPipeWire.string(value))
            return 0
        }
        return events
    }

    /// Events of proxies this connection created through a factory (links, metadata).
    nonisolated(unsafe) static let createdProxy: UnsafeMutablePointer<pw_proxy_events> = make {
        var events = pw_proxy_events()
        events.version = UInt32(PW_VERSION_PROXY_EVENTS)
        events.bound = { data, globalID in
            let object = created(data)
            object.connection.createdBound(object, globalID: globalID)
        }
        events.removed = { data in
            let object = created(data)
            object.connection.createdRemoved(object)
        }
        events.error = { data, _, res, message in
            let object = created(data)
            object.connection.createdFailed(object, res: res, message: LibPipeWire.string(message))
        }
        return events
    }

    private static func make<Table>(_ build: () -> Table) -> UnsafeMutablePointer<Table> {
        let table = UnsafeMutablePointer<Table>.allocate(capacity: 1)
        table.initialize(to: build())
        return table
    }

    private static func connection(_ data: UnsafeMutableRawPointer?) -> PipeWireConnection {
        Unmanaged<PipeWireConnection>.fromOpaque(data!).takeUnretainedValue()
    }

    private static func bound(_ data: UnsafeMutableRawPointer?) -> BoundObject {
        Unmanaged<BoundObject>.fromOpaque(data!).takeUnretainedValue()
    }

    private static func created(_ data: UnsafeMutableRawPointer?) -> CreatedObject {
        Unmanaged<CreatedObject>.fromOpaque(data!).takeUnretainedValue()
    }
}
