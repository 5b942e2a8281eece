import Testing

@testable import EarshotDaemon

/// The control connection's lifecycle without a socket: every order of events the connection
/// meets, and what it must do to its dispatch sources for each.
@Suite("control connection lifecycle")
struct ControlConnectionLifecycleTests {
    typealias L = ControlConnectionLifecycle

    @Test("reading starts held; the first resume activates the source, later ones resume it, a hold suspends it")
    func readingHoldAndResume() {
        var l = L()
        #expect(!l.mayRead)
        let step1 = l.holdReading()
        #expect(step1 == nil, "held already: nothing to suspend")
        let step2 = l.resumeReading()
        #expect(step2 == (true, .activate))
        #expect(l.mayRead)
        let step3 = l.resumeReading()
        #expect(step3 == (false, nil), "resumed twice: nothing")
        let step4 = l.holdReading()
        #expect(step4 == .suspend)
        #expect(!l.mayRead)
        let step5 = l.resumeReading()
        #expect(step5 == (true, .resume))
    }

    @Test("a full turn queues one more turn, never two, and none once held or closed")
    func scheduledTurns() {
        var l = L()
        _ = l.resumeReading()
        let step6 = l.turnRead(taken: 10, perTurn: 64)
        #expect(!step6)
        let step7 = l.turnRead(taken: 64, perTurn: 64)
        #expect(step7)
        let step8 = l.turnRead(taken: 64, perTurn: 64)
        #expect(!step8, "one is queued already")
        l.scheduledTurnRuns()
        _ = l.holdReading()
        let step9 = l.turnRead(taken: 64, perTurn: 64)
        #expect(!step9)
        _ = l.resumeReading()
        _ = l.close()
        let step10 = l.turnRead(taken: 64, perTurn: 64)
        #expect(!step10)
    }

    @Test("the input ends: reading stops for good, a resume does nothing; the answers still go out")
    func inputEnds() {
        var l = L()
        _ = l.resumeReading()
        let step11 = l.inputEnds()
        #expect(step11 == .suspend)
        #expect(!l.mayRead)
        let step12 = l.resumeReading()
        #expect(step12 == (false, nil))
        #expect(l.writesNow)
        #expect(!l.isClosed)
    }

    @Test("the input ends while reading is held: nothing to suspend")
    func inputEndsWhileHeld() {
        var l = L()
        _ = l.resumeReading()
        _ = l.holdReading()
        let step13 = l.inputEnds()
        #expect(step13 == nil)
        #expect(l.reading == .suspended)
    }

    @Test("a full socket runs the write source until the output is flushed; a close that waited for it is then due")
    func writing() {
        var l = L()
        #expect(l.writesNow)
        let step14 = l.outputBlocked()
        #expect(step14 == .activate)
        #expect(!l.writesNow, "the write source says when the socket takes more")
        let step15 = l.closeWhenFlushed(outputEmpty: false)
        #expect(!step15)
        let flushed = l.outputFlushed()
        #expect(flushed.operation == .suspend && flushed.close)
        let step16 = l.outputBlocked()
        #expect(step16 == .resume)
    }

    @Test("close when flushed with nothing waiting closes at once")
    func closeWhenNothingWaits() {
        var l = L()
        let step17 = l.closeWhenFlushed(outputEmpty: true)
        #expect(step17)
        #expect(!l.closesWhenFlushed)
    }

    @Test("closing cancels both sources and starts any not running, so each cancel handler runs; a second close does nothing")
    func closing() {
        var l = L()
        _ = l.resumeReading()
        _ = l.holdReading()  // read source suspended; write source never started
        guard let operations = l.close() else {
            Issue.record("the first close closes")
            return
        }
        #expect(operations.read == [.cancel, .resume])
        #expect(operations.write == [.cancel, .activate])
        let step18 = l.close()
        #expect(step18 == nil)
        #expect(!l.mayRead)
        let step19 = l.holdReading()
        let step20 = l.resumeReading()
        #expect(step19 == nil && step20 == (false, nil))
    }

    @Test("a running source is only cancelled")
    func closingRunning() {
        var l = L()
        _ = l.resumeReading()
        _ = l.outputBlocked()
        guard let operations = l.close() else {
            Issue.record("the first close closes")
            return
        }
        #expect(operations.read == [.cancel] && operations.write == [.cancel])
    }

    @Test("the descriptor goes after both cancel handlers, once")
    func descriptorRelease() {
        var l = L()
        _ = l.close()
        let step21 = l.sourceCancelled()
        #expect(!step21)
        let step22 = l.sourceCancelled()
        #expect(step22)
    }

    @Test("the input ends after the close (the peer went while closing): nothing to suspend, still closed")
    func endAfterClose() {
        var l = L()
        _ = l.resumeReading()
        _ = l.close()
        let step23 = l.inputEnds()
        #expect(step23 == nil)
        #expect(l.isClosed && !l.mayRead)
    }

    @Test("after the close, neither source is touched again: a write blocked or flushed, or the input's end, does nothing")
    func nothingAfterClose() {
        var l = L()
        _ = l.resumeReading()
        _ = l.outputBlocked()
        _ = l.close()
        let blocked = l.outputBlocked()
        let flushed = l.outputFlushed()
        #expect(blocked == nil && flushed.operation == nil && !flushed.close)
    }
}
