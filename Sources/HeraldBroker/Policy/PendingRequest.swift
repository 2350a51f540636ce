/// A request of a registered app that nobody has decided on yet (rule 5, not determined), as operators see it
/// in `herald requests`. The store deduplicates by app, operation and subject, counting repeats.
public struct PendingRequest: Hashable, Sendable {
    public var appID: AppID
    /// The app's name, as its manifest had it when the request was made.
    public var appName: String
    /// The app's usage description, shown with the request.
    public var usageDescription: String
    public var operation: PermissionOperation
    /// The service type concerned (`_tictactoe._tcp`), when the request concerns one.
    public var serviceType: String?
    /// What was asked, normalised (see ``RequestTarget/subject``).
    public var subject: String

    public init(appID: AppID, appName: String, usageDescription: String, operation: PermissionOperation,
                serviceType: String?, subject: String) {
        self.appID = appID
        self.appName = appName
        self.usageDescription = usageDescription
        self.operation = operation
        self.serviceType = serviceType
        self.subject = subject
    }
}
