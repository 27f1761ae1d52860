internal import CPostgreSQL
import Foundation
import Storage
import StorageTestBackends
import Testing

@testable import PostgreSQLBackend

/// The SQLSTATE constants and their matching: a code matches itself, a class every code of the
/// class, and both match a `PostgreSQLError` or a `StorageError` that carries one.
@Suite struct PostgreSQLErrorCodeTests {
    /// A `StorageError` as the backend throws it, with `sqlState` as its PostgreSQL error's code.
    static func thrown(_ sqlState: String?) -> StorageError {
        StorageError(.engine, "failed", underlying: PostgreSQLError(sqlState: sqlState, message: "failed"))
    }

    /// A code matches an equal code only; a class matches the codes whose first two characters
    /// it is, and no code of another class.
    @Test func codesMatchThemselvesAndClassesTheirCodes() {
        #expect(PostgreSQLError.Code.uniqueViolation ~= PostgreSQLError.Code(rawValue: "23505"))
        #expect(!(PostgreSQLError.Code.uniqueViolation ~= PostgreSQLError.Code.notNullViolation))
        #expect(PostgreSQLError.CodeClass.integrityConstraintViolation ~= PostgreSQLError.Code.uniqueViolation)
        #expect(PostgreSQLError.CodeClass.integrityConstraintViolation ~= PostgreSQLError.Code.notNullViolation)
        #expect(!(PostgreSQLError.CodeClass.integrityConstraintViolation ~= PostgreSQLError.Code.serializationFailure))
        #expect(PostgreSQLError.Code.invalidPassword.codeClass == .invalidAuthorizationSpecification)
        // `28P01` is of class `28`; `42501`, the other refusal of a role, is not.
        switch PostgreSQLError.Code.invalidPassword {
        case PostgreSQLError.CodeClass.invalidAuthorizationSpecification: break
        default: Issue.record("28P01 did not match class 28")
        }
        switch PostgreSQLError.Code.insufficientPrivilege {
        case PostgreSQLError.CodeClass.invalidAuthorizationSpecification: Issue.record("42501 matched class 28")
        case .insufficientPrivilege: break
        default: Issue.record("42501 did not match itself")
        }
    }

    /// A `catch` clause names a code or a class: it catches the `StorageError` whose underlying
    /// `PostgreSQLError` has it, and a bare `PostgreSQLError`; an error without a SQLSTATE (a
    /// failure of the connection itself) or of another engine matches none.
    @Test func catchClausesMatchTheUnderlyingError() {
        /// Which clause catches `error`.
        func caught(_ error: any Error) -> String {
            do {
                throw error
            } catch PostgreSQLError.Code.serializationFailure {
                return "serialization failure"
            } catch PostgreSQLError.CodeClass.transactionRollback {
                return "another rollback"
            } catch {
                return "other"
            }
        }
        #expect(caught(Self.thrown("40001")) == "serialization failure")
        #expect(caught(Self.thrown("40P01")) == "another rollback")
        #expect(caught(PostgreSQLError(sqlState: "40001", message: "bare")) == "serialization failure")
        #expect(caught(Self.thrown("23505")) == "other")
        #expect(caught(Self.thrown(nil)) == "other")
        #expect(caught(StorageError(.busy, "no underlying error")) == "other")
        #expect(caught(CocoaError(.fileNoSuchFile)) == "other")
        #expect(Self.thrown(nil).postgreSQL?.code == nil)
        #expect(Self.thrown("40001").postgreSQL?.code == .serializationFailure)
    }

    /// The errors the server raises match the constants: a duplicate key is `uniqueViolation`
    /// (and of class `integrityConstraintViolation`), a missing table `undefinedTable`.
    @Test func theServersErrorsMatchTheConstants() throws {
        let pool = try PostgreSQLConnectionPool(url: try PostgreSQLTestServer.url(), configuration: .init())
        let connection = try pool.connect()
        var duplicate: (any Error)?
        do {
            try connection.execute(
                "CREATE TEMPORARY TABLE codes (x int PRIMARY KEY); INSERT INTO codes VALUES (1), (1)"
            )
        } catch {
            duplicate = error
        }
        let error = try #require(duplicate)
        #expect(PostgreSQLError.Code.uniqueViolation ~= error, "\(error)")
        #expect(PostgreSQLError.CodeClass.integrityConstraintViolation ~= error, "\(error)")
        #expect(!(PostgreSQLError.Code.notNullViolation ~= error), "\(error)")
        var caughtByCode = false
        do {
            try connection.execute("SELECT * FROM no_such_table_of_the_code_tests")
        } catch PostgreSQLError.Code.undefinedTable {
            caughtByCode = true
        } catch {
            Issue.record("not caught as undefinedTable: \(error)")
        }
        #expect(caughtByCode)
    }

    /// Each constant is the SQLSTATE the server itself gives its condition name: a PL/pgSQL
    /// function raises each name and returns the SQLSTATE raised. PL/pgSQL knows no name of the
    /// classes that are not errors (`00`, `01`, `02`), and a name that two classes share (as
    /// `modifying_sql_data_not_permitted`, `2F002` and `38002`) is one of its codes. Each alias
    /// (`undefinedSchema`) is a code named otherwise too, and each class the first two
    /// characters of codes.
    @Test func eachConstantIsTheServersCodeForItsName() throws {
        let pool = try PostgreSQLConnectionPool(url: try PostgreSQLTestServer.url(), configuration: .init())
        let connection = try pool.connect()
        try connection.execute(
            """
            CREATE FUNCTION pg_temp.sqlstate_of(name text) RETURNS text LANGUAGE plpgsql AS $$
            BEGIN
                RAISE EXCEPTION 'raised' USING ERRCODE = name;
            EXCEPTION WHEN OTHERS OR query_canceled OR assert_failure THEN
                RETURN SQLSTATE;
            END $$
            """
        )
        let named = Self.codes.compactMap { code, name in
            name.map { (code, $0) }
        }
        let errors = named.filter { !["00", "01", "02"].contains($0.0.codeClass.rawValue) }
        let names = errors.map { "'" + $0.1 + "'" }.joined(separator: ", ")
        let result = try connection.query(
            "SELECT string_agg(pg_temp.sqlstate_of(name), ',' ORDER BY n) FROM unnest(ARRAY[\(names)])"
                + " WITH ORDINALITY AS t(name, n)",
            PostgreSQLParameters(),
            "cannot raise the conditions"
        )
        guard case .text(let text)? = result.firstValue else {
            Issue.record("no answer: \(String(describing: result.firstValue))")
            return
        }
        let states = text.split(separator: ",").map(String.init)
        try #require(states.count == errors.count)
        let codesByName = Dictionary(grouping: named, by: \.1).mapValues { $0.map(\.0.rawValue) }
        for ((code, name), state) in zip(errors, states) {
            if codesByName[name]?.count == 1 {
                #expect(code.rawValue == state, "\(name)")
            } else {
                #expect(codesByName[name]?.contains(state) == true, "\(name): \(state)")
            }
        }
        #expect(errors.count > 200)
        for (alias, name) in Self.codes where name == nil {
            #expect(named.contains { $0.0 == alias }, "\(alias)")
        }
        for (codeClass, characters) in Self.classes {
            #expect(codeClass.rawValue == characters)
            #expect(Self.codes.contains { $0.0.codeClass == codeClass }, "\(characters)")
        }
    }

    /// Every code constant, with its condition name (`nil` for an alias of another code).
    static let codes: [(PostgreSQLError.Code, String?)] = [
        (.successfulCompletion, "successful_completion"),
        (.warning, "warning"),
        (.dynamicResultSetsReturned, "dynamic_result_sets_returned"),
        (.implicitZeroBitPadding, "implicit_zero_bit_padding"),
        (.nullValueEliminatedInSetFunction, "null_value_eliminated_in_set_function"),
        (.privilegeNotGranted, "privilege_not_granted"),
        (.privilegeNotRevoked, "privilege_not_revoked"),
        (.warningStringDataRightTruncation, "string_data_right_truncation"),
        (.deprecatedFeature, "deprecated_feature"),
        (.noData, "no_data"),
        (.noAdditionalDynamicResultSetsReturned, "no_additional_dynamic_result_sets_returned"),
        (.sqlStatementNotYetComplete, "sql_statement_not_yet_complete"),
        (.connectionException, "connection_exception"),
        (.connectionDoesNotExist, "connection_does_not_exist"),
        (.connectionFailure, "connection_failure"),
        (.sqlclientUnableToEstablishSqlconnection, "sqlclient_unable_to_establish_sqlconnection"),
        (.sqlserverRejectedEstablishmentOfSqlconnection, "sqlserver_rejected_establishment_of_sqlconnection"),
        (.transactionResolutionUnknown, "transaction_resolution_unknown"),
        (.protocolViolation, "protocol_violation"),
        (.triggeredActionException, "triggered_action_exception"),
        (.featureNotSupported, "feature_not_supported"),
        (.invalidTransactionInitiation, "invalid_transaction_initiation"),
        (.locatorException, "locator_exception"),
        (.invalidLocatorSpecification, "invalid_locator_specification"),
        (.invalidGrantor, "invalid_grantor"),
        (.invalidGrantOperation, "invalid_grant_operation"),
        (.invalidRoleSpecification, "invalid_role_specification"),
        (.diagnosticsException, "diagnostics_exception"),
        (.stackedDiagnosticsAccessedWithoutActiveHandler, "stacked_diagnostics_accessed_without_active_handler"),
        (.caseNotFound, "case_not_found"),
        (.cardinalityViolation, "cardinality_violation"),
        (.dataException, "data_exception"),
        (.arrayElementError, nil),
        (.arraySubscriptError, "array_subscript_error"),
        (.characterNotInRepertoire, "character_not_in_repertoire"),
        (.datetimeFieldOverflow, "datetime_field_overflow"),
        (.datetimeValueOutOfRange, nil),
        (.divisionByZero, "division_by_zero"),
        (.errorInAssignment, "error_in_assignment"),
        (.escapeCharacterConflict, "escape_character_conflict"),
        (.indicatorOverflow, "indicator_overflow"),
        (.intervalFieldOverflow, "interval_field_overflow"),
        (.invalidArgumentForLogarithm, "invalid_argument_for_logarithm"),
        (.invalidArgumentForNtileFunction, "invalid_argument_for_ntile_function"),
        (.invalidArgumentForNthValueFunction, "invalid_argument_for_nth_value_function"),
        (.invalidArgumentForPowerFunction, "invalid_argument_for_power_function"),
        (.invalidArgumentForWidthBucketFunction, "invalid_argument_for_width_bucket_function"),
        (.invalidCharacterValueForCast, "invalid_character_value_for_cast"),
        (.invalidDatetimeFormat, "invalid_datetime_format"),
        (.invalidEscapeCharacter, "invalid_escape_character"),
        (.invalidEscapeOctet, "invalid_escape_octet"),
        (.invalidEscapeSequence, "invalid_escape_sequence"),
        (.nonstandardUseOfEscapeCharacter, "nonstandard_use_of_escape_character"),
        (.invalidIndicatorParameterValue, "invalid_indicator_parameter_value"),
        (.invalidParameterValue, "invalid_parameter_value"),
        (.invalidPrecedingOrFollowingSize, "invalid_preceding_or_following_size"),
        (.invalidRegularExpression, "invalid_regular_expression"),
        (.invalidRowCountInLimitClause, "invalid_row_count_in_limit_clause"),
        (.invalidRowCountInResultOffsetClause, "invalid_row_count_in_result_offset_clause"),
        (.invalidTablesampleArgument, "invalid_tablesample_argument"),
        (.invalidTablesampleRepeat, "invalid_tablesample_repeat"),
        (.invalidTimeZoneDisplacementValue, "invalid_time_zone_displacement_value"),
        (.invalidUseOfEscapeCharacter, "invalid_use_of_escape_character"),
        (.mostSpecificTypeMismatch, "most_specific_type_mismatch"),
        (.dataExceptionNullValueNotAllowed, "null_value_not_allowed"),
        (.nullValueNoIndicatorParameter, "null_value_no_indicator_parameter"),
        (.numericValueOutOfRange, "numeric_value_out_of_range"),
        (.sequenceGeneratorLimitExceeded, "sequence_generator_limit_exceeded"),
        (.stringDataLengthMismatch, "string_data_length_mismatch"),
        (.dataExceptionStringDataRightTruncation, "string_data_right_truncation"),
        (.substringError, "substring_error"),
        (.trimError, "trim_error"),
        (.unterminatedCString, "unterminated_c_string"),
        (.zeroLengthCharacterString, "zero_length_character_string"),
        (.floatingPointException, "floating_point_exception"),
        (.invalidTextRepresentation, "invalid_text_representation"),
        (.invalidBinaryRepresentation, "invalid_binary_representation"),
        (.badCopyFileFormat, "bad_copy_file_format"),
        (.untranslatableCharacter, "untranslatable_character"),
        (.notAnXMLDocument, "not_an_xml_document"),
        (.invalidXMLDocument, "invalid_xml_document"),
        (.invalidXMLContent, "invalid_xml_content"),
        (.invalidXMLComment, "invalid_xml_comment"),
        (.invalidXMLProcessingInstruction, "invalid_xml_processing_instruction"),
        (.duplicateJSONObjectKeyValue, "duplicate_json_object_key_value"),
        (.invalidArgumentForSQLJSONDatetimeFunction, "invalid_argument_for_sql_json_datetime_function"),
        (.invalidJSONText, "invalid_json_text"),
        (.invalidSQLJSONSubscript, "invalid_sql_json_subscript"),
        (.moreThanOneSQLJSONItem, "more_than_one_sql_json_item"),
        (.noSQLJSONItem, "no_sql_json_item"),
        (.nonNumericSQLJSONItem, "non_numeric_sql_json_item"),
        (.nonUniqueKeysInAJSONObject, "non_unique_keys_in_a_json_object"),
        (.singletonSQLJSONItemRequired, "singleton_sql_json_item_required"),
        (.sqlJSONArrayNotFound, "sql_json_array_not_found"),
        (.sqlJSONMemberNotFound, "sql_json_member_not_found"),
        (.sqlJSONNumberNotFound, "sql_json_number_not_found"),
        (.sqlJSONObjectNotFound, "sql_json_object_not_found"),
        (.tooManyJSONArrayElements, "too_many_json_array_elements"),
        (.tooManyJSONObjectMembers, "too_many_json_object_members"),
        (.sqlJSONScalarRequired, "sql_json_scalar_required"),
        (.sqlJSONItemCannotBeCastToTargetType, "sql_json_item_cannot_be_cast_to_target_type"),
        (.integrityConstraintViolation, "integrity_constraint_violation"),
        (.restrictViolation, "restrict_violation"),
        (.notNullViolation, "not_null_violation"),
        (.foreignKeyViolation, "foreign_key_violation"),
        (.uniqueViolation, "unique_violation"),
        (.checkViolation, "check_violation"),
        (.exclusionViolation, "exclusion_violation"),
        (.invalidCursorState, "invalid_cursor_state"),
        (.invalidTransactionState, "invalid_transaction_state"),
        (.activeSQLTransaction, "active_sql_transaction"),
        (.branchTransactionAlreadyActive, "branch_transaction_already_active"),
        (.heldCursorRequiresSameIsolationLevel, "held_cursor_requires_same_isolation_level"),
        (.inappropriateAccessModeForBranchTransaction, "inappropriate_access_mode_for_branch_transaction"),
        (.inappropriateIsolationLevelForBranchTransaction, "inappropriate_isolation_level_for_branch_transaction"),
        (.noActiveSQLTransactionForBranchTransaction, "no_active_sql_transaction_for_branch_transaction"),
        (.readOnlySQLTransaction, "read_only_sql_transaction"),
        (.schemaAndDataStatementMixingNotSupported, "schema_and_data_statement_mixing_not_supported"),
        (.noActiveSQLTransaction, "no_active_sql_transaction"),
        (.inFailedSQLTransaction, "in_failed_sql_transaction"),
        (.idleInTransactionSessionTimeout, "idle_in_transaction_session_timeout"),
        (.invalidSQLStatementName, "invalid_sql_statement_name"),
        (.triggeredDataChangeViolation, "triggered_data_change_violation"),
        (.invalidAuthorizationSpecification, "invalid_authorization_specification"),
        (.invalidPassword, "invalid_password"),
        (.dependentPrivilegeDescriptorsStillExist, "dependent_privilege_descriptors_still_exist"),
        (.dependentObjectsStillExist, "dependent_objects_still_exist"),
        (.invalidTransactionTermination, "invalid_transaction_termination"),
        (.sqlRoutineException, "sql_routine_exception"),
        (.functionExecutedNoReturnStatement, "function_executed_no_return_statement"),
        (.sqlRoutineExceptionModifyingSQLDataNotPermitted, "modifying_sql_data_not_permitted"),
        (.sqlRoutineExceptionProhibitedSQLStatementAttempted, "prohibited_sql_statement_attempted"),
        (.sqlRoutineExceptionReadingSQLDataNotPermitted, "reading_sql_data_not_permitted"),
        (.invalidCursorName, "invalid_cursor_name"),
        (.externalRoutineException, "external_routine_exception"),
        (.containingSQLNotPermitted, "containing_sql_not_permitted"),
        (.externalRoutineExceptionModifyingSQLDataNotPermitted, "modifying_sql_data_not_permitted"),
        (.externalRoutineExceptionProhibitedSQLStatementAttempted, "prohibited_sql_statement_attempted"),
        (.externalRoutineExceptionReadingSQLDataNotPermitted, "reading_sql_data_not_permitted"),
        (.externalRoutineInvocationException, "external_routine_invocation_exception"),
        (.invalidSQLStateReturned, "invalid_sqlstate_returned"),
        (.externalRoutineInvocationExceptionNullValueNotAllowed, "null_value_not_allowed"),
        (.triggerProtocolViolated, "trigger_protocol_violated"),
        (.srfProtocolViolated, "srf_protocol_violated"),
        (.eventTriggerProtocolViolated, "event_trigger_protocol_violated"),
        (.savepointException, "savepoint_exception"),
        (.invalidSavepointSpecification, "invalid_savepoint_specification"),
        (.invalidCatalogName, "invalid_catalog_name"),
        (.invalidSchemaName, "invalid_schema_name"),
        (.transactionRollback, "transaction_rollback"),
        (.transactionIntegrityConstraintViolation, "transaction_integrity_constraint_violation"),
        (.serializationFailure, "serialization_failure"),
        (.statementCompletionUnknown, "statement_completion_unknown"),
        (.deadlockDetected, "deadlock_detected"),
        (.syntaxErrorOrAccessRuleViolation, "syntax_error_or_access_rule_violation"),
        (.syntaxError, "syntax_error"),
        (.insufficientPrivilege, "insufficient_privilege"),
        (.cannotCoerce, "cannot_coerce"),
        (.groupingError, "grouping_error"),
        (.windowingError, "windowing_error"),
        (.invalidRecursion, "invalid_recursion"),
        (.invalidForeignKey, "invalid_foreign_key"),
        (.invalidName, "invalid_name"),
        (.nameTooLong, "name_too_long"),
        (.reservedName, "reserved_name"),
        (.datatypeMismatch, "datatype_mismatch"),
        (.indeterminateDatatype, "indeterminate_datatype"),
        (.collationMismatch, "collation_mismatch"),
        (.indeterminateCollation, "indeterminate_collation"),
        (.wrongObjectType, "wrong_object_type"),
        (.generatedAlways, "generated_always"),
        (.undefinedColumn, "undefined_column"),
        (.undefinedCursor, nil),
        (.undefinedDatabase, nil),
        (.undefinedFunction, "undefined_function"),
        (.undefinedPstatement, nil),
        (.undefinedSchema, nil),
        (.undefinedTable, "undefined_table"),
        (.undefinedParameter, "undefined_parameter"),
        (.undefinedObject, "undefined_object"),
        (.duplicateColumn, "duplicate_column"),
        (.duplicateCursor, "duplicate_cursor"),
        (.duplicateDatabase, "duplicate_database"),
        (.duplicateFunction, "duplicate_function"),
        (.duplicatePreparedStatement, "duplicate_prepared_statement"),
        (.duplicateSchema, "duplicate_schema"),
        (.duplicateTable, "duplicate_table"),
        (.duplicateAlias, "duplicate_alias"),
        (.duplicateObject, "duplicate_object"),
        (.ambiguousColumn, "ambiguous_column"),
        (.ambiguousFunction, "ambiguous_function"),
        (.ambiguousParameter, "ambiguous_parameter"),
        (.ambiguousAlias, "ambiguous_alias"),
        (.invalidColumnReference, "invalid_column_reference"),
        (.invalidColumnDefinition, "invalid_column_definition"),
        (.invalidCursorDefinition, "invalid_cursor_definition"),
        (.invalidDatabaseDefinition, "invalid_database_definition"),
        (.invalidFunctionDefinition, "invalid_function_definition"),
        (.invalidPreparedStatementDefinition, "invalid_prepared_statement_definition"),
        (.invalidSchemaDefinition, "invalid_schema_definition"),
        (.invalidTableDefinition, "invalid_table_definition"),
        (.invalidObjectDefinition, "invalid_object_definition"),
        (.withCheckOptionViolation, "with_check_option_violation"),
        (.insufficientResources, "insufficient_resources"),
        (.diskFull, "disk_full"),
        (.outOfMemory, "out_of_memory"),
        (.tooManyConnections, "too_many_connections"),
        (.configurationLimitExceeded, "configuration_limit_exceeded"),
        (.programLimitExceeded, "program_limit_exceeded"),
        (.statementTooComplex, "statement_too_complex"),
        (.tooManyColumns, "too_many_columns"),
        (.tooManyArguments, "too_many_arguments"),
        (.objectNotInPrerequisiteState, "object_not_in_prerequisite_state"),
        (.objectInUse, "object_in_use"),
        (.cantChangeRuntimeParam, "cant_change_runtime_param"),
        (.lockNotAvailable, "lock_not_available"),
        (.unsafeNewEnumValueUsage, "unsafe_new_enum_value_usage"),
        (.operatorIntervention, "operator_intervention"),
        (.queryCanceled, "query_canceled"),
        (.adminShutdown, "admin_shutdown"),
        (.crashShutdown, "crash_shutdown"),
        (.cannotConnectNow, "cannot_connect_now"),
        (.databaseDropped, "database_dropped"),
        (.idleSessionTimeout, "idle_session_timeout"),
        (.systemError, "system_error"),
        (.ioError, "io_error"),
        (.undefinedFile, "undefined_file"),
        (.duplicateFile, "duplicate_file"),
        (.snapshotTooOld, "snapshot_too_old"),
        (.configFileError, "config_file_error"),
        (.lockFileExists, "lock_file_exists"),
        (.fdwError, "fdw_error"),
        (.fdwColumnNameNotFound, "fdw_column_name_not_found"),
        (.fdwDynamicParameterValueNeeded, "fdw_dynamic_parameter_value_needed"),
        (.fdwFunctionSequenceError, "fdw_function_sequence_error"),
        (.fdwInconsistentDescriptorInformation, "fdw_inconsistent_descriptor_information"),
        (.fdwInvalidAttributeValue, "fdw_invalid_attribute_value"),
        (.fdwInvalidColumnName, "fdw_invalid_column_name"),
        (.fdwInvalidColumnNumber, "fdw_invalid_column_number"),
        (.fdwInvalidDataType, "fdw_invalid_data_type"),
        (.fdwInvalidDataTypeDescriptors, "fdw_invalid_data_type_descriptors"),
        (.fdwInvalidDescriptorFieldIdentifier, "fdw_invalid_descriptor_field_identifier"),
        (.fdwInvalidHandle, "fdw_invalid_handle"),
        (.fdwInvalidOptionIndex, "fdw_invalid_option_index"),
        (.fdwInvalidOptionName, "fdw_invalid_option_name"),
        (.fdwInvalidStringLengthOrBufferLength, "fdw_invalid_string_length_or_buffer_length"),
        (.fdwInvalidStringFormat, "fdw_invalid_string_format"),
        (.fdwInvalidUseOfNullPointer, "fdw_invalid_use_of_null_pointer"),
        (.fdwTooManyHandles, "fdw_too_many_handles"),
        (.fdwOutOfMemory, "fdw_out_of_memory"),
        (.fdwNoSchemas, "fdw_no_schemas"),
        (.fdwOptionNameNotFound, "fdw_option_name_not_found"),
        (.fdwReplyHandle, "fdw_reply_handle"),
        (.fdwSchemaNotFound, "fdw_schema_not_found"),
        (.fdwTableNotFound, "fdw_table_not_found"),
        (.fdwUnableToCreateExecution, "fdw_unable_to_create_execution"),
        (.fdwUnableToCreateReply, "fdw_unable_to_create_reply"),
        (.fdwUnableToEstablishConnection, "fdw_unable_to_establish_connection"),
        (.plpgsqlError, "plpgsql_error"),
        (.raiseException, "raise_exception"),
        (.noDataFound, "no_data_found"),
        (.tooManyRows, "too_many_rows"),
        (.assertFailure, "assert_failure"),
        (.internalError, "internal_error"),
        (.dataCorrupted, "data_corrupted"),
        (.indexCorrupted, "index_corrupted"),
    ]

    /// Every class constant, with its two characters.
    static let classes: [(PostgreSQLError.CodeClass, String)] = [
        (.successfulCompletion, "00"),
        (.warning, "01"),
        (.noData, "02"),
        (.sqlStatementNotYetComplete, "03"),
        (.connectionException, "08"),
        (.triggeredActionException, "09"),
        (.featureNotSupported, "0A"),
        (.invalidTransactionInitiation, "0B"),
        (.locatorException, "0F"),
        (.invalidGrantor, "0L"),
        (.invalidRoleSpecification, "0P"),
        (.diagnosticsException, "0Z"),
        (.caseNotFound, "20"),
        (.cardinalityViolation, "21"),
        (.dataException, "22"),
        (.integrityConstraintViolation, "23"),
        (.invalidCursorState, "24"),
        (.invalidTransactionState, "25"),
        (.invalidSQLStatementName, "26"),
        (.triggeredDataChangeViolation, "27"),
        (.invalidAuthorizationSpecification, "28"),
        (.dependentPrivilegeDescriptorsStillExist, "2B"),
        (.invalidTransactionTermination, "2D"),
        (.sqlRoutineException, "2F"),
        (.invalidCursorName, "34"),
        (.externalRoutineException, "38"),
        (.externalRoutineInvocationException, "39"),
        (.savepointException, "3B"),
        (.invalidCatalogName, "3D"),
        (.invalidSchemaName, "3F"),
        (.transactionRollback, "40"),
        (.syntaxErrorOrAccessRuleViolation, "42"),
        (.withCheckOptionViolation, "44"),
        (.insufficientResources, "53"),
        (.programLimitExceeded, "54"),
        (.objectNotInPrerequisiteState, "55"),
        (.operatorIntervention, "57"),
        (.systemError, "58"),
        (.snapshotFailure, "72"),
        (.configurationFileError, "F0"),
        (.foreignDataWrapperError, "HV"),
        (.plpgsqlError, "P0"),
        (.internalError, "XX"),
    ]
}
