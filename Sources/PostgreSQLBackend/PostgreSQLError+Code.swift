extension PostgreSQLError {
    /// A SQLSTATE: the five-character code of a PostgreSQL error (PostgreSQL's documentation,
    /// appendix A, "PostgreSQL Error Codes"), with a constant for each code the server defines.
    ///
    /// A code matches, in a `switch` or a `catch`, an equal code and a `PostgreSQLError` or a
    /// `StorageError` whose underlying error has that code; a ``CodeClass`` matches every code of
    /// its class:
    ///
    /// ```swift
    /// do {
    ///     try store.save(record)
    /// } catch PostgreSQLError.Code.uniqueViolation {
    ///     // 23505
    /// } catch PostgreSQLError.CodeClass.integrityConstraintViolation {
    ///     // any other 23xxx
    /// }
    /// ```
    public struct Code: Sendable, Hashable, RawRepresentable, ExpressibleByStringLiteral, CustomStringConvertible {
        /// The five characters, for example `23505`.
        public let rawValue: String

        /// Creates a code from its five characters.
        /// - Parameter rawValue: the SQLSTATE, for example `40001`.
        public init(rawValue: String) {
            self.rawValue = rawValue
        }

        /// Creates a code from a literal: `let code: PostgreSQLError.Code = "40001"`.
        /// - Parameter value: the SQLSTATE.
        public init(stringLiteral value: String) {
            self.init(rawValue: value)
        }

        /// The class of the code: its first two characters (`23` for `23505`).
        public var codeClass: CodeClass { CodeClass(rawValue: String(rawValue.prefix(2))) }

        /// The five characters.
        public var description: String { rawValue }

        /// Whether `error` is a `PostgreSQLError`, or a `StorageError` whose underlying error is
        /// one, with this code.
        /// - Parameters:
        ///   - pattern: the code to match.
        ///   - error: the error thrown.
        /// - Returns: whether the error has the code.
        public static func ~= (pattern: Code, error: any Error) -> Bool {
            PostgreSQLError.underlying(error)?.code == pattern
        }

        // Class 00: Successful Completion

        /// `successful_completion` (`00000`).
        public static let successfulCompletion: Code = "00000"

        // Class 01: Warning

        /// `warning` (`01000`).
        public static let warning: Code = "01000"

        /// `dynamic_result_sets_returned` (`0100C`).
        public static let dynamicResultSetsReturned: Code = "0100C"

        /// `implicit_zero_bit_padding` (`01008`).
        public static let implicitZeroBitPadding: Code = "01008"

        /// `null_value_eliminated_in_set_function` (`01003`).
        public static let nullValueEliminatedInSetFunction: Code = "01003"

        /// `privilege_not_granted` (`01007`).
        public static let privilegeNotGranted: Code = "01007"

        /// `privilege_not_revoked` (`01006`).
        public static let privilegeNotRevoked: Code = "01006"

        /// `string_data_right_truncation` (`01004`).
        public static let warningStringDataRightTruncation: Code = "01004"

        /// `deprecated_feature` (`01P01`).
        public static let deprecatedFeature: Code = "01P01"

        // Class 02: No Data

        /// `no_data` (`02000`).
        public static let noData: Code = "02000"

        /// `no_additional_dynamic_result_sets_returned` (`02001`).
        public static let noAdditionalDynamicResultSetsReturned: Code = "02001"

        // Class 03: SQL Statement Not Yet Complete

        /// `sql_statement_not_yet_complete` (`03000`).
        public static let sqlStatementNotYetComplete: Code = "03000"

        // Class 08: Connection Exception

        /// `connection_exception` (`08000`).
        public static let connectionException: Code = "08000"

        /// `connection_does_not_exist` (`08003`).
        public static let connectionDoesNotExist: Code = "08003"

        /// `connection_failure` (`08006`).
        public static let connectionFailure: Code = "08006"

        /// `sqlclient_unable_to_establish_sqlconnection` (`08001`).
        public static let sqlclientUnableToEstablishSqlconnection: Code = "08001"

        /// `sqlserver_rejected_establishment_of_sqlconnection` (`08004`).
        public static let sqlserverRejectedEstablishmentOfSqlconnection: Code = "08004"

        /// `transaction_resolution_unknown` (`08007`).
        public static let transactionResolutionUnknown: Code = "08007"

        /// `protocol_violation` (`08P01`).
        public static let protocolViolation: Code = "08P01"

        // Class 09: Triggered Action Exception

        /// `triggered_action_exception` (`09000`).
        public static let triggeredActionException: Code = "09000"

        // Class 0A: Feature Not Supported

        /// `feature_not_supported` (`0A000`).
        public static let featureNotSupported: Code = "0A000"

        // Class 0B: Invalid Transaction Initiation

        /// `invalid_transaction_initiation` (`0B000`).
        public static let invalidTransactionInitiation: Code = "0B000"

        // Class 0F: Locator Exception

        /// `locator_exception` (`0F000`).
        public static let locatorException: Code = "0F000"

        /// `invalid_locator_specification` (`0F001`).
        public static let invalidLocatorSpecification: Code = "0F001"

        // Class 0L: Invalid Grantor

        /// `invalid_grantor` (`0L000`).
        public static let invalidGrantor: Code = "0L000"

        /// `invalid_grant_operation` (`0LP01`).
        public static let invalidGrantOperation: Code = "0LP01"

        // Class 0P: Invalid Role Specification

        /// `invalid_role_specification` (`0P000`).
        public static let invalidRoleSpecification: Code = "0P000"

        // Class 0Z: Diagnostics Exception

        /// `diagnostics_exception` (`0Z000`).
        public static let diagnosticsException: Code = "0Z000"

        /// `stacked_diagnostics_accessed_without_active_handler` (`0Z002`).
        public static let stackedDiagnosticsAccessedWithoutActiveHandler: Code = "0Z002"

        // Class 20: Case Not Found

        /// `case_not_found` (`20000`).
        public static let caseNotFound: Code = "20000"

        // Class 21: Cardinality Violation

        /// `cardinality_violation` (`21000`).
        public static let cardinalityViolation: Code = "21000"

        // Class 22: Data Exception

        /// `data_exception` (`22000`).
        public static let dataException: Code = "22000"

        /// `2202E` by the name of the server's `ERRCODE_ARRAY_ELEMENT_ERROR`: the same code as
        /// ``arraySubscriptError``.
        public static let arrayElementError: Code = "2202E"

        /// `array_subscript_error` (`2202E`).
        public static let arraySubscriptError: Code = "2202E"

        /// `character_not_in_repertoire` (`22021`).
        public static let characterNotInRepertoire: Code = "22021"

        /// `datetime_field_overflow` (`22008`).
        public static let datetimeFieldOverflow: Code = "22008"

        /// `22008` by the name of the server's `ERRCODE_DATETIME_VALUE_OUT_OF_RANGE`: the same code as
        /// ``datetimeFieldOverflow``.
        public static let datetimeValueOutOfRange: Code = "22008"

        /// `division_by_zero` (`22012`).
        public static let divisionByZero: Code = "22012"

        /// `error_in_assignment` (`22005`).
        public static let errorInAssignment: Code = "22005"

        /// `escape_character_conflict` (`2200B`).
        public static let escapeCharacterConflict: Code = "2200B"

        /// `indicator_overflow` (`22022`).
        public static let indicatorOverflow: Code = "22022"

        /// `interval_field_overflow` (`22015`).
        public static let intervalFieldOverflow: Code = "22015"

        /// `invalid_argument_for_logarithm` (`2201E`).
        public static let invalidArgumentForLogarithm: Code = "2201E"

        /// `invalid_argument_for_ntile_function` (`22014`).
        public static let invalidArgumentForNtileFunction: Code = "22014"

        /// `invalid_argument_for_nth_value_function` (`22016`).
        public static let invalidArgumentForNthValueFunction: Code = "22016"

        /// `invalid_argument_for_power_function` (`2201F`).
        public static let invalidArgumentForPowerFunction: Code = "2201F"

        /// `invalid_argument_for_width_bucket_function` (`2201G`).
        public static let invalidArgumentForWidthBucketFunction: Code = "2201G"

        /// `invalid_character_value_for_cast` (`22018`).
        public static let invalidCharacterValueForCast: Code = "22018"

        /// `invalid_datetime_format` (`22007`).
        public static let invalidDatetimeFormat: Code = "22007"

        /// `invalid_escape_character` (`22019`).
        public static let invalidEscapeCharacter: Code = "22019"

        /// `invalid_escape_octet` (`2200D`).
        public static let invalidEscapeOctet: Code = "2200D"

        /// `invalid_escape_sequence` (`22025`).
        public static let invalidEscapeSequence: Code = "22025"

        /// `nonstandard_use_of_escape_character` (`22P06`).
        public static let nonstandardUseOfEscapeCharacter: Code = "22P06"

        /// `invalid_indicator_parameter_value` (`22010`).
        public static let invalidIndicatorParameterValue: Code = "22010"

        /// `invalid_parameter_value` (`22023`).
        public static let invalidParameterValue: Code = "22023"

        /// `invalid_preceding_or_following_size` (`22013`).
        public static let invalidPrecedingOrFollowingSize: Code = "22013"

        /// `invalid_regular_expression` (`2201B`).
        public static let invalidRegularExpression: Code = "2201B"

        /// `invalid_row_count_in_limit_clause` (`2201W`).
        public static let invalidRowCountInLimitClause: Code = "2201W"

        /// `invalid_row_count_in_result_offset_clause` (`2201X`).
        public static let invalidRowCountInResultOffsetClause: Code = "2201X"

        /// `invalid_tablesample_argument` (`2202H`).
        public static let invalidTablesampleArgument: Code = "2202H"

        /// `invalid_tablesample_repeat` (`2202G`).
        public static let invalidTablesampleRepeat: Code = "2202G"

        /// `invalid_time_zone_displacement_value` (`22009`).
        public static let invalidTimeZoneDisplacementValue: Code = "22009"

        /// `invalid_use_of_escape_character` (`2200C`).
        public static let invalidUseOfEscapeCharacter: Code = "2200C"

        /// `most_specific_type_mismatch` (`2200G`).
        public static let mostSpecificTypeMismatch: Code = "2200G"

        /// `null_value_not_allowed` (`22004`).
        public static let dataExceptionNullValueNotAllowed: Code = "22004"

        /// `null_value_no_indicator_parameter` (`22002`).
        public static let nullValueNoIndicatorParameter: Code = "22002"

        /// `numeric_value_out_of_range` (`22003`).
        public static let numericValueOutOfRange: Code = "22003"

        /// `sequence_generator_limit_exceeded` (`2200H`).
        public static let sequenceGeneratorLimitExceeded: Code = "2200H"

        /// `string_data_length_mismatch` (`22026`).
        public static let stringDataLengthMismatch: Code = "22026"

        /// `string_data_right_truncation` (`22001`).
        public static let dataExceptionStringDataRightTruncation: Code = "22001"

        /// `substring_error` (`22011`).
        public static let substringError: Code = "22011"

        /// `trim_error` (`22027`).
        public static let trimError: Code = "22027"

        /// `unterminated_c_string` (`22024`).
        public static let unterminatedCString: Code = "22024"

        /// `zero_length_character_string` (`2200F`).
        public static let zeroLengthCharacterString: Code = "2200F"

        /// `floating_point_exception` (`22P01`).
        public static let floatingPointException: Code = "22P01"

        /// `invalid_text_representation` (`22P02`).
        public static let invalidTextRepresentation: Code = "22P02"

        /// `invalid_binary_representation` (`22P03`).
        public static let invalidBinaryRepresentation: Code = "22P03"

        /// `bad_copy_file_format` (`22P04`).
        public static let badCopyFileFormat: Code = "22P04"

        /// `untranslatable_character` (`22P05`).
        public static let untranslatableCharacter: Code = "22P05"

        /// `not_an_xml_document` (`2200L`).
        public static let notAnXMLDocument: Code = "2200L"

        /// `invalid_xml_document` (`2200M`).
        public static let invalidXMLDocument: Code = "2200M"

        /// `invalid_xml_content` (`2200N`).
        public static let invalidXMLContent: Code = "2200N"

        /// `invalid_xml_comment` (`2200S`).
        public static let invalidXMLComment: Code = "2200S"

        /// `invalid_xml_processing_instruction` (`2200T`).
        public static let invalidXMLProcessingInstruction: Code = "2200T"

        /// `duplicate_json_object_key_value` (`22030`).
        public static let duplicateJSONObjectKeyValue: Code = "22030"

        /// `invalid_argument_for_sql_json_datetime_function` (`22031`).
        public static let invalidArgumentForSQLJSONDatetimeFunction: Code = "22031"

        /// `invalid_json_text` (`22032`).
        public static let invalidJSONText: Code = "22032"

        /// `invalid_sql_json_subscript` (`22033`).
        public static let invalidSQLJSONSubscript: Code = "22033"

        /// `more_than_one_sql_json_item` (`22034`).
        public static let moreThanOneSQLJSONItem: Code = "22034"

        /// `no_sql_json_item` (`22035`).
        public static let noSQLJSONItem: Code = "22035"

        /// `non_numeric_sql_json_item` (`22036`).
        public static let nonNumericSQLJSONItem: Code = "22036"

        /// `non_unique_keys_in_a_json_object` (`22037`).
        public static let nonUniqueKeysInAJSONObject: Code = "22037"

        /// `singleton_sql_json_item_required` (`22038`).
        public static let singletonSQLJSONItemRequired: Code = "22038"

        /// `sql_json_array_not_found` (`22039`).
        public static let sqlJSONArrayNotFound: Code = "22039"

        /// `sql_json_member_not_found` (`2203A`).
        public static let sqlJSONMemberNotFound: Code = "2203A"

        /// `sql_json_number_not_found` (`2203B`).
        public static let sqlJSONNumberNotFound: Code = "2203B"

        /// `sql_json_object_not_found` (`2203C`).
        public static let sqlJSONObjectNotFound: Code = "2203C"

        /// `too_many_json_array_elements` (`2203D`).
        public static let tooManyJSONArrayElements: Code = "2203D"

        /// `too_many_json_object_members` (`2203E`).
        public static let tooManyJSONObjectMembers: Code = "2203E"

        /// `sql_json_scalar_required` (`2203F`).
        public static let sqlJSONScalarRequired: Code = "2203F"

        /// `sql_json_item_cannot_be_cast_to_target_type` (`2203G`).
        public static let sqlJSONItemCannotBeCastToTargetType: Code = "2203G"

        // Class 23: Integrity Constraint Violation

        /// `integrity_constraint_violation` (`23000`).
        public static let integrityConstraintViolation: Code = "23000"

        /// `restrict_violation` (`23001`).
        public static let restrictViolation: Code = "23001"

        /// `not_null_violation` (`23502`).
        public static let notNullViolation: Code = "23502"

        /// `foreign_key_violation` (`23503`).
        public static let foreignKeyViolation: Code = "23503"

        /// `unique_violation` (`23505`).
        public static let uniqueViolation: Code = "23505"

        /// `check_violation` (`23514`).
        public static let checkViolation: Code = "23514"

        /// `exclusion_violation` (`23P01`).
        public static let exclusionViolation: Code = "23P01"

        // Class 24: Invalid Cursor State

        /// `invalid_cursor_state` (`24000`).
        public static let invalidCursorState: Code = "24000"

        // Class 25: Invalid Transaction State

        /// `invalid_transaction_state` (`25000`).
        public static let invalidTransactionState: Code = "25000"

        /// `active_sql_transaction` (`25001`).
        public static let activeSQLTransaction: Code = "25001"

        /// `branch_transaction_already_active` (`25002`).
        public static let branchTransactionAlreadyActive: Code = "25002"

        /// `held_cursor_requires_same_isolation_level` (`25008`).
        public static let heldCursorRequiresSameIsolationLevel: Code = "25008"

        /// `inappropriate_access_mode_for_branch_transaction` (`25003`).
        public static let inappropriateAccessModeForBranchTransaction: Code = "25003"

        /// `inappropriate_isolation_level_for_branch_transaction` (`25004`).
        public static let inappropriateIsolationLevelForBranchTransaction: Code = "25004"

        /// `no_active_sql_transaction_for_branch_transaction` (`25005`).
        public static let noActiveSQLTransactionForBranchTransaction: Code = "25005"

        /// `read_only_sql_transaction` (`25006`).
        public static let readOnlySQLTransaction: Code = "25006"

        /// `schema_and_data_statement_mixing_not_supported` (`25007`).
        public static let schemaAndDataStatementMixingNotSupported: Code = "25007"

        /// `no_active_sql_transaction` (`25P01`).
        public static let noActiveSQLTransaction: Code = "25P01"

        /// `in_failed_sql_transaction` (`25P02`).
        public static let inFailedSQLTransaction: Code = "25P02"

        /// `idle_in_transaction_session_timeout` (`25P03`).
        public static let idleInTransactionSessionTimeout: Code = "25P03"

        // Class 26: Invalid SQL Statement Name

        /// `invalid_sql_statement_name` (`26000`).
        public static let invalidSQLStatementName: Code = "26000"

        // Class 27: Triggered Data Change Violation

        /// `triggered_data_change_violation` (`27000`).
        public static let triggeredDataChangeViolation: Code = "27000"

        // Class 28: Invalid Authorization Specification

        /// `invalid_authorization_specification` (`28000`).
        public static let invalidAuthorizationSpecification: Code = "28000"

        /// `invalid_password` (`28P01`).
        public static let invalidPassword: Code = "28P01"

        // Class 2B: Dependent Privilege Descriptors Still Exist

        /// `dependent_privilege_descriptors_still_exist` (`2B000`).
        public static let dependentPrivilegeDescriptorsStillExist: Code = "2B000"

        /// `dependent_objects_still_exist` (`2BP01`).
        public static let dependentObjectsStillExist: Code = "2BP01"

        // Class 2D: Invalid Transaction Termination

        /// `invalid_transaction_termination` (`2D000`).
        public static let invalidTransactionTermination: Code = "2D000"

        // Class 2F: SQL Routine Exception

        /// `sql_routine_exception` (`2F000`).
        public static let sqlRoutineException: Code = "2F000"

        /// `function_executed_no_return_statement` (`2F005`).
        public static let functionExecutedNoReturnStatement: Code = "2F005"

        /// `modifying_sql_data_not_permitted` (`2F002`).
        public static let sqlRoutineExceptionModifyingSQLDataNotPermitted: Code = "2F002"

        /// `prohibited_sql_statement_attempted` (`2F003`).
        public static let sqlRoutineExceptionProhibitedSQLStatementAttempted: Code = "2F003"

        /// `reading_sql_data_not_permitted` (`2F004`).
        public static let sqlRoutineExceptionReadingSQLDataNotPermitted: Code = "2F004"

        // Class 34: Invalid Cursor Name

        /// `invalid_cursor_name` (`34000`).
        public static let invalidCursorName: Code = "34000"

        // Class 38: External Routine Exception

        /// `external_routine_exception` (`38000`).
        public static let externalRoutineException: Code = "38000"

        /// `containing_sql_not_permitted` (`38001`).
        public static let containingSQLNotPermitted: Code = "38001"

        /// `modifying_sql_data_not_permitted` (`38002`).
        public static let externalRoutineExceptionModifyingSQLDataNotPermitted: Code = "38002"

        /// `prohibited_sql_statement_attempted` (`38003`).
        public static let externalRoutineExceptionProhibitedSQLStatementAttempted: Code = "38003"

        /// `reading_sql_data_not_permitted` (`38004`).
        public static let externalRoutineExceptionReadingSQLDataNotPermitted: Code = "38004"

        // Class 39: External Routine Invocation Exception

        /// `external_routine_invocation_exception` (`39000`).
        public static let externalRoutineInvocationException: Code = "39000"

        /// `invalid_sqlstate_returned` (`39001`).
        public static let invalidSQLStateReturned: Code = "39001"

        /// `null_value_not_allowed` (`39004`).
        public static let externalRoutineInvocationExceptionNullValueNotAllowed: Code = "39004"

        /// `trigger_protocol_violated` (`39P01`).
        public static let triggerProtocolViolated: Code = "39P01"

        /// `srf_protocol_violated` (`39P02`).
        public static let srfProtocolViolated: Code = "39P02"

        /// `event_trigger_protocol_violated` (`39P03`).
        public static let eventTriggerProtocolViolated: Code = "39P03"

        // Class 3B: Savepoint Exception

        /// `savepoint_exception` (`3B000`).
        public static let savepointException: Code = "3B000"

        /// `invalid_savepoint_specification` (`3B001`).
        public static let invalidSavepointSpecification: Code = "3B001"

        // Class 3D: Invalid Catalog Name

        /// `invalid_catalog_name` (`3D000`).
        public static let invalidCatalogName: Code = "3D000"

        // Class 3F: Invalid Schema Name

        /// `invalid_schema_name` (`3F000`).
        public static let invalidSchemaName: Code = "3F000"

        // Class 40: Transaction Rollback

        /// `transaction_rollback` (`40000`).
        public static let transactionRollback: Code = "40000"

        /// `transaction_integrity_constraint_violation` (`40002`).
        public static let transactionIntegrityConstraintViolation: Code = "40002"

        /// `serialization_failure` (`40001`).
        public static let serializationFailure: Code = "40001"

        /// `statement_completion_unknown` (`40003`).
        public static let statementCompletionUnknown: Code = "40003"

        /// `deadlock_detected` (`40P01`).
        public static let deadlockDetected: Code = "40P01"

        // Class 42: Syntax Error or Access Rule Violation

        /// `syntax_error_or_access_rule_violation` (`42000`).
        public static let syntaxErrorOrAccessRuleViolation: Code = "42000"

        /// `syntax_error` (`42601`).
        public static let syntaxError: Code = "42601"

        /// `insufficient_privilege` (`42501`).
        public static let insufficientPrivilege: Code = "42501"

        /// `cannot_coerce` (`42846`).
        public static let cannotCoerce: Code = "42846"

        /// `grouping_error` (`42803`).
        public static let groupingError: Code = "42803"

        /// `windowing_error` (`42P20`).
        public static let windowingError: Code = "42P20"

        /// `invalid_recursion` (`42P19`).
        public static let invalidRecursion: Code = "42P19"

        /// `invalid_foreign_key` (`42830`).
        public static let invalidForeignKey: Code = "42830"

        /// `invalid_name` (`42602`).
        public static let invalidName: Code = "42602"

        /// `name_too_long` (`42622`).
        public static let nameTooLong: Code = "42622"

        /// `reserved_name` (`42939`).
        public static let reservedName: Code = "42939"

        /// `datatype_mismatch` (`42804`).
        public static let datatypeMismatch: Code = "42804"

        /// `indeterminate_datatype` (`42P18`).
        public static let indeterminateDatatype: Code = "42P18"

        /// `collation_mismatch` (`42P21`).
        public static let collationMismatch: Code = "42P21"

        /// `indeterminate_collation` (`42P22`).
        public static let indeterminateCollation: Code = "42P22"

        /// `wrong_object_type` (`42809`).
        public static let wrongObjectType: Code = "42809"

        /// `generated_always` (`428C9`).
        public static let generatedAlways: Code = "428C9"

        /// `undefined_column` (`42703`).
        public static let undefinedColumn: Code = "42703"

        /// `34000` by the name of the server's `ERRCODE_UNDEFINED_CURSOR`: the same code as
        /// ``invalidCursorName``.
        public static let undefinedCursor: Code = "34000"

        /// `3D000` by the name of the server's `ERRCODE_UNDEFINED_DATABASE`: the same code as
        /// ``invalidCatalogName``.
        public static let undefinedDatabase: Code = "3D000"

        /// `undefined_function` (`42883`).
        public static let undefinedFunction: Code = "42883"

        /// `26000` by the name of the server's `ERRCODE_UNDEFINED_PSTATEMENT`: the same code as
        /// ``invalidSQLStatementName``.
        public static let undefinedPstatement: Code = "26000"

        /// `3F000` by the name of the server's `ERRCODE_UNDEFINED_SCHEMA`: the same code as
        /// ``invalidSchemaName``.
        public static let undefinedSchema: Code = "3F000"

        /// `undefined_table` (`42P01`).
        public static let undefinedTable: Code = "42P01"

        /// `undefined_parameter` (`42P02`).
        public static let undefinedParameter: Code = "42P02"

        /// `undefined_object` (`42704`).
        public static let undefinedObject: Code = "42704"

        /// `duplicate_column` (`42701`).
        public static let duplicateColumn: Code = "42701"

        /// `duplicate_cursor` (`42P03`).
        public static let duplicateCursor: Code = "42P03"

        /// `duplicate_database` (`42P04`).
        public static let duplicateDatabase: Code = "42P04"

        /// `duplicate_function` (`42723`).
        public static let duplicateFunction: Code = "42723"

        /// `duplicate_prepared_statement` (`42P05`).
        public static let duplicatePreparedStatement: Code = "42P05"

        /// `duplicate_schema` (`42P06`).
        public static let duplicateSchema: Code = "42P06"

        /// `duplicate_table` (`42P07`).
        public static let duplicateTable: Code = "42P07"

        /// `duplicate_alias` (`42712`).
        public static let duplicateAlias: Code = "42712"

        /// `duplicate_object` (`42710`).
        public static let duplicateObject: Code = "42710"

        /// `ambiguous_column` (`42702`).
        public static let ambiguousColumn: Code = "42702"

        /// `ambiguous_function` (`42725`).
        public static let ambiguousFunction: Code = "42725"

        /// `ambiguous_parameter` (`42P08`).
        public static let ambiguousParameter: Code = "42P08"

        /// `ambiguous_alias` (`42P09`).
        public static let ambiguousAlias: Code = "42P09"

        /// `invalid_column_reference` (`42P10`).
        public static let invalidColumnReference: Code = "42P10"

        /// `invalid_column_definition` (`42611`).
        public static let invalidColumnDefinition: Code = "42611"

        /// `invalid_cursor_definition` (`42P11`).
        public static let invalidCursorDefinition: Code = "42P11"

        /// `invalid_database_definition` (`42P12`).
        public static let invalidDatabaseDefinition: Code = "42P12"

        /// `invalid_function_definition` (`42P13`).
        public static let invalidFunctionDefinition: Code = "42P13"

        /// `invalid_prepared_statement_definition` (`42P14`).
        public static let invalidPreparedStatementDefinition: Code = "42P14"

        /// `invalid_schema_definition` (`42P15`).
        public static let invalidSchemaDefinition: Code = "42P15"

        /// `invalid_table_definition` (`42P16`).
        public static let invalidTableDefinition: Code = "42P16"

        /// `invalid_object_definition` (`42P17`).
        public static let invalidObjectDefinition: Code = "42P17"

        // Class 44: WITH CHECK OPTION Violation

        /// `with_check_option_violation` (`44000`).
        public static let withCheckOptionViolation: Code = "44000"

        // Class 53: Insufficient Resources

        /// `insufficient_resources` (`53000`).
        public static let insufficientResources: Code = "53000"

        /// `disk_full` (`53100`).
        public static let diskFull: Code = "53100"

        /// `out_of_memory` (`53200`).
        public static let outOfMemory: Code = "53200"

        /// `too_many_connections` (`53300`).
        public static let tooManyConnections: Code = "53300"

        /// `configuration_limit_exceeded` (`53400`).
        public static let configurationLimitExceeded: Code = "53400"

        // Class 54: Program Limit Exceeded

        /// `program_limit_exceeded` (`54000`).
        public static let programLimitExceeded: Code = "54000"

        /// `statement_too_complex` (`54001`).
        public static let statementTooComplex: Code = "54001"

        /// `too_many_columns` (`54011`).
        public static let tooManyColumns: Code = "54011"

        /// `too_many_arguments` (`54023`).
        public static let tooManyArguments: Code = "54023"

        // Class 55: Object Not In Prerequisite State

        /// `object_not_in_prerequisite_state` (`55000`).
        public static let objectNotInPrerequisiteState: Code = "55000"

        /// `object_in_use` (`55006`).
        public static let objectInUse: Code = "55006"

        /// `cant_change_runtime_param` (`55P02`).
        public static let cantChangeRuntimeParam: Code = "55P02"

        /// `lock_not_available` (`55P03`).
        public static let lockNotAvailable: Code = "55P03"

        /// `unsafe_new_enum_value_usage` (`55P04`).
        public static let unsafeNewEnumValueUsage: Code = "55P04"

        // Class 57: Operator Intervention

        /// `operator_intervention` (`57000`).
        public static let operatorIntervention: Code = "57000"

        /// `query_canceled` (`57014`).
        public static let queryCanceled: Code = "57014"

        /// `admin_shutdown` (`57P01`).
        public static let adminShutdown: Code = "57P01"

        /// `crash_shutdown` (`57P02`).
        public static let crashShutdown: Code = "57P02"

        /// `cannot_connect_now` (`57P03`).
        public static let cannotConnectNow: Code = "57P03"

        /// `database_dropped` (`57P04`).
        public static let databaseDropped: Code = "57P04"

        /// `idle_session_timeout` (`57P05`).
        public static let idleSessionTimeout: Code = "57P05"

        // Class 58: System Error

        /// `system_error` (`58000`).
        public static let systemError: Code = "58000"

        /// `io_error` (`58030`).
        public static let ioError: Code = "58030"

        /// `undefined_file` (`58P01`).
        public static let undefinedFile: Code = "58P01"

        /// `duplicate_file` (`58P02`).
        public static let duplicateFile: Code = "58P02"

        // Class 72: Snapshot Failure

        /// `snapshot_too_old` (`72000`).
        public static let snapshotTooOld: Code = "72000"

        // Class F0: Configuration File Error

        /// `config_file_error` (`F0000`).
        public static let configFileError: Code = "F0000"

        /// `lock_file_exists` (`F0001`).
        public static let lockFileExists: Code = "F0001"

        // Class HV: Foreign Data Wrapper Error

        /// `fdw_error` (`HV000`).
        public static let fdwError: Code = "HV000"

        /// `fdw_column_name_not_found` (`HV005`).
        public static let fdwColumnNameNotFound: Code = "HV005"

        /// `fdw_dynamic_parameter_value_needed` (`HV002`).
        public static let fdwDynamicParameterValueNeeded: Code = "HV002"

        /// `fdw_function_sequence_error` (`HV010`).
        public static let fdwFunctionSequenceError: Code = "HV010"

        /// `fdw_inconsistent_descriptor_information` (`HV021`).
        public static let fdwInconsistentDescriptorInformation: Code = "HV021"

        /// `fdw_invalid_attribute_value` (`HV024`).
        public static let fdwInvalidAttributeValue: Code = "HV024"

        /// `fdw_invalid_column_name` (`HV007`).
        public static let fdwInvalidColumnName: Code = "HV007"

        /// `fdw_invalid_column_number` (`HV008`).
        public static let fdwInvalidColumnNumber: Code = "HV008"

        /// `fdw_invalid_data_type` (`HV004`).
        public static let fdwInvalidDataType: Code = "HV004"

        /// `fdw_invalid_data_type_descriptors` (`HV006`).
        public static let fdwInvalidDataTypeDescriptors: Code = "HV006"

        /// `fdw_invalid_descriptor_field_identifier` (`HV091`).
        public static let fdwInvalidDescriptorFieldIdentifier: Code = "HV091"

        /// `fdw_invalid_handle` (`HV00B`).
        public static let fdwInvalidHandle: Code = "HV00B"

        /// `fdw_invalid_option_index` (`HV00C`).
        public static let fdwInvalidOptionIndex: Code = "HV00C"

        /// `fdw_invalid_option_name` (`HV00D`).
        public static let fdwInvalidOptionName: Code = "HV00D"

        /// `fdw_invalid_string_length_or_buffer_length` (`HV090`).
        public static let fdwInvalidStringLengthOrBufferLength: Code = "HV090"

        /// `fdw_invalid_string_format` (`HV00A`).
        public static let fdwInvalidStringFormat: Code = "HV00A"

        /// `fdw_invalid_use_of_null_pointer` (`HV009`).
        public static let fdwInvalidUseOfNullPointer: Code = "HV009"

        /// `fdw_too_many_handles` (`HV014`).
        public static let fdwTooManyHandles: Code = "HV014"

        /// `fdw_out_of_memory` (`HV001`).
        public static let fdwOutOfMemory: Code = "HV001"

        /// `fdw_no_schemas` (`HV00P`).
        public static let fdwNoSchemas: Code = "HV00P"

        /// `fdw_option_name_not_found` (`HV00J`).
        public static let fdwOptionNameNotFound: Code = "HV00J"

        /// `fdw_reply_handle` (`HV00K`).
        public static let fdwReplyHandle: Code = "HV00K"

        /// `fdw_schema_not_found` (`HV00Q`).
        public static let fdwSchemaNotFound: Code = "HV00Q"

        /// `fdw_table_not_found` (`HV00R`).
        public static let fdwTableNotFound: Code = "HV00R"

        /// `fdw_unable_to_create_execution` (`HV00L`).
        public static let fdwUnableToCreateExecution: Code = "HV00L"

        /// `fdw_unable_to_create_reply` (`HV00M`).
        public static let fdwUnableToCreateReply: Code = "HV00M"

        /// `fdw_unable_to_establish_connection` (`HV00N`).
        public static let fdwUnableToEstablishConnection: Code = "HV00N"

        // Class P0: PL/pgSQL Error

        /// `plpgsql_error` (`P0000`).
        public static let plpgsqlError: Code = "P0000"

        /// `raise_exception` (`P0001`).
        public static let raiseException: Code = "P0001"

        /// `no_data_found` (`P0002`).
        public static let noDataFound: Code = "P0002"

        /// `too_many_rows` (`P0003`).
        public static let tooManyRows: Code = "P0003"

        /// `assert_failure` (`P0004`).
        public static let assertFailure: Code = "P0004"

        // Class XX: Internal Error

        /// `internal_error` (`XX000`).
        public static let internalError: Code = "XX000"

        /// `data_corrupted` (`XX001`).
        public static let dataCorrupted: Code = "XX001"

        /// `index_corrupted` (`XX002`).
        public static let indexCorrupted: Code = "XX002"
    }
}
