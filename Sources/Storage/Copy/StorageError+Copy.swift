extension StorageError.Code {
    /// A copy found a destination collection that already holds records, and was asked neither
    /// to merge nor to replace; nothing was written to it.
    public static let collectionNotEmpty = StorageError.Code("collectionNotEmpty")
    /// Two stores that should hold the same data do not: the error names the collection and,
    /// where one differs, a key.
    public static let verificationFailed = StorageError.Code("verificationFailed")
    /// A collection named in a call does not exist.
    public static let unknownCollection = StorageError.Code("unknownCollection")
}
