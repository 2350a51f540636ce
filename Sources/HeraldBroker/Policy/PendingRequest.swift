/// A request of a registered app that nobody has decided on yet (rule 5, not determined), as operators see it
/// in `herald requests`. The store deduplicates by app, operation and subject, counting repeats; an app's address
/// lookups are one request whatever the names (``folded``), so that an app looking up many names neither fills
/// the list nor floods `herald prompt`.
package struct PendingRequest: Hashable, Sendable {
    /// The subject of an app's folded address lookups.
    package static let addressLookupsSubject = "address lookups"

    package var appID: AppID
    /// The app's name, as its manifest had it when the request was made.
    package var appName: String
    /// The app's usage description, shown with the request.
    package var usageDescription: String
    package var operation: PermissionOperation
    /// The service type concerned (`_tictactoe._tcp`), when the request concerns one.
    package var serviceType: String?
    /// What was asked, normalised (see ``RequestTarget/subject``); ``addressLookupsSubject`` once folded.
    package var subject: String
    /// For a folded request: the latest name asked for.
    package var latestSubject: String?

    package init(
        appID: AppID, appName: String, usageDescription: String, operation: PermissionOperation,
        serviceType: String?, subject: String, latestSubject: String? = nil
    ) {
        self.appID = appID
        self.appName = appName
        self.usageDescription = usageDescription
        self.operation = operation
        self.serviceType = serviceType
        self.subject = subject
        self.latestSubject = latestSubject
    }

    /// The request as the store keeps it: an address lookup becomes the app's one request for
    /// ``addressLookupsSubject``, remembering the name as the latest; any other request is unchanged.
    package var folded: PendingRequest {
        guard operation == .addressLookup, subject != Self.addressLookupsSubject else { return self }
        var request = self
        request.latestSubject = subject
        request.subject = Self.addressLookupsSubject
        return request
    }
}
