extension PostgreSQLError {
    /// The class of a SQLSTATE: its first two characters, which name the kind of failure (`08`,
    /// a connection exception; `23`, an integrity constraint violation), with a constant for
    /// each class the server defines.
    ///
    /// A class matches, in a `switch` or a `catch`, every ``Code`` of the class and a
    /// `PostgreSQLError` or a `StorageError` whose underlying error has a code of the class.
    public struct CodeClass: Sendable, Hashable, RawRepresentable, ExpressibleByStringLiteral, CustomStringConvertible {
        /// The two characters, for example `23`.
        public let rawValue: String

        /// Creates a class from its two characters.
        /// - Parameter rawValue: the class, for example `40`.
        public init(rawValue: String) {
            self.rawValue = rawValue
        }

        /// Creates a class from a literal: `let transactionRollback: PostgreSQLError.CodeClass = "40"`.
        /// - Parameter value: the class's two characters.
        public init(stringLiteral value: String) {
            self.init(rawValue: value)
        }

        /// The two characters.
        public var description: String { rawValue }

        /// Whether `code` is of this class.
        /// - Parameters:
        ///   - pattern: the class to match.
        ///   - code: the code to match it against.
        /// - Returns: whether the code's first two characters are the class.
        public static func ~= (pattern: CodeClass, code: Code) -> Bool {
            code.codeClass == pattern
        }

        /// Whether `error` is a `PostgreSQLError`, or a `StorageError` whose underlying error is
        /// one, with a code of this class.
        /// - Parameters:
        ///   - pattern: the class to match.
        ///   - error: the error thrown.
        /// - Returns: whether the error's code is of the class.
        public static func ~= (pattern: CodeClass, error: any Error) -> Bool {
            PostgreSQLError.underlying(error)?.code?.codeClass == pattern
        }

        /// Class `00`: Successful Completion.
        public static let successfulCompletion: CodeClass = "00"

        /// Class `01`: Warning.
        public static let warning: CodeClass = "01"

        /// Class `02`: No Data.
        public static let noData: CodeClass = "02"

        /// Class `03`: SQL Statement Not Yet Complete.
        public static let sqlStatementNotYetComplete: CodeClass = "03"

        /// Class `08`: Connection Exception.
        public static let connectionException: CodeClass = "08"

        /// Class `09`: Triggered Action Exception.
        public static let triggeredActionException: CodeClass = "09"

        /// Class `0A`: Feature Not Supported.
        public static let featureNotSupported: CodeClass = "0A"

        /// Class `0B`: Invalid Transaction Initiation.
        public static let invalidTransactionInitiation: CodeClass = "0B"

        /// Class `0F`: Locator Exception.
        public static let locatorException: CodeClass = "0F"

        /// Class `0L`: Invalid Grantor.
        public static let invalidGrantor: CodeClass = "0L"

        /// Class `0P`: Invalid Role Specification.
        public static let invalidRoleSpecification: CodeClass = "0P"

        /// Class `0Z`: Diagnostics Exception.
        public static let diagnosticsException: CodeClass = "0Z"

        /// Class `20`: Case Not Found.
        public static let caseNotFound: CodeClass = "20"

        /// Class `21`: Cardinality Violation.
        public static let cardinalityViolation: CodeClass = "21"

        /// Class `22`: Data Exception.
        public static let dataException: CodeClass = "22"

        /// Class `23`: Integrity Constraint Violation.
        public static let integrityConstraintViolation: CodeClass = "23"

        /// Class `24`: Invalid Cursor State.
        public static let invalidCursorState: CodeClass = "24"

        /// Class `25`: Invalid Transaction State.
        public static let invalidTransactionState: CodeClass = "25"

        /// Class `26`: Invalid SQL Statement Name.
        public static let invalidSQLStatementName: CodeClass = "26"

        /// Class `27`: Triggered Data Change Violation.
        public static let triggeredDataChangeViolation: CodeClass = "27"

        /// Class `28`: Invalid Authorization Specification.
        public static let invalidAuthorizationSpecification: CodeClass = "28"

        /// Class `2B`: Dependent Privilege Descriptors Still Exist.
        public static let dependentPrivilegeDescriptorsStillExist: CodeClass = "2B"

        /// Class `2D`: Invalid Transaction Termination.
        public static let invalidTransactionTermination: CodeClass = "2D"

        /// Class `2F`: SQL Routine Exception.
        public static let sqlRoutineException: CodeClass = "2F"

        /// Class `34`: Invalid Cursor Name.
        public static let invalidCursorName: CodeClass = "34"

        /// Class `38`: External Routine Exception.
        public static let externalRoutineException: CodeClass = "38"

        /// Class `39`: External Routine Invocation Exception.
        public static let externalRoutineInvocationException: CodeClass = "39"

        /// Class `3B`: Savepoint Exception.
        public static let savepointException: CodeClass = "3B"

        /// Class `3D`: Invalid Catalog Name.
        public static let invalidCatalogName: CodeClass = "3D"

        /// Class `3F`: Invalid Schema Name.
        public static let invalidSchemaName: CodeClass = "3F"

        /// Class `40`: Transaction Rollback.
        public static let transactionRollback: CodeClass = "40"

        /// Class `42`: Syntax Error or Access Rule Violation.
        public static let syntaxErrorOrAccessRuleViolation: CodeClass = "42"

        /// Class `44`: WITH CHECK OPTION Violation.
        public static let withCheckOptionViolation: CodeClass = "44"

        /// Class `53`: Insufficient Resources.
        public static let insufficientResources: CodeClass = "53"

        /// Class `54`: Program Limit Exceeded.
        public static let programLimitExceeded: CodeClass = "54"

        /// Class `55`: Object Not In Prerequisite State.
        public static let objectNotInPrerequisiteState: CodeClass = "55"

        /// Class `57`: Operator Intervention.
        public static let operatorIntervention: CodeClass = "57"

        /// Class `58`: System Error.
        public static let systemError: CodeClass = "58"

        /// Class `72`: Snapshot Failure.
        public static let snapshotFailure: CodeClass = "72"

        /// Class `F0`: Configuration File Error.
        public static let configurationFileError: CodeClass = "F0"

        /// Class `HV`: Foreign Data Wrapper Error.
        public static let foreignDataWrapperError: CodeClass = "HV"

        /// Class `P0`: PL/pgSQL Error.
        public static let plpgsqlError: CodeClass = "P0"

        /// Class `XX`: Internal Error.
        public static let internalError: CodeClass = "XX"
    }
}
