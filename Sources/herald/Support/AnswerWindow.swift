/// When a one-shot command (`resolve`, `lookup`, `query`) stops listening: `quiet` after the last answer
/// (answers on other interfaces and from other address families follow the first within a moment), or
/// at the deadline if nothing answers.
struct AnswerWindow {
    /// How long to wait after the last answer.
    let quiet: Duration
    let deadline: ContinuousClock.Instant
    private(set) var lastAnswer: ContinuousClock.Instant?

    init(timeout: Double, quiet: Duration = .milliseconds(500)) {
        self.quiet = quiet
        deadline = .now + .milliseconds(Int64(timeout * 1000))
    }

    /// Notes that an answer (or a change) just arrived.
    mutating func answered(at time: ContinuousClock.Instant = .now) { lastAnswer = time }

    /// When to stop waiting, as things stand.
    var endsAt: ContinuousClock.Instant {
        guard let lastAnswer else { return deadline }
        return min(deadline, lastAnswer + quiet)
    }

    var isOver: Bool { ContinuousClock.now >= endsAt }
}
