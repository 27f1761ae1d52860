/// A command line taken apart: positional arguments, options with a value and flags.
///
/// Hand-written (no package can be fetched here): `--name value` and `--name=value` for options,
/// `--flag` for flags, `--` ends the options, and `-` alone is a positional (standard input or
/// output). Anything else starting with `-` is a usage error naming it.
package struct Arguments: Equatable {
    /// The arguments that are not options, in order.
    package var positionals: [String] = []
    /// The value of each option given, by name without the dashes (the last one wins).
    package var options: [String: String] = [:]
    /// The flags given, by name without the dashes.
    package var flags: Set<String> = []

    /// Takes `arguments` apart.
    /// - Parameters:
    ///   - arguments: the command's arguments (without the program and command names).
    ///   - options: the names of the options that take a value.
    ///   - flags: the names of the flags.
    /// - Throws: `UsageError` for an unknown option or an option without its value.
    package init(parsing arguments: [String], options: Set<String>, flags: Set<String>) throws {
        var index = 0
        var optionsEnded = false
        while index < arguments.count {
            let argument = arguments[index]
            index += 1
            guard !optionsEnded, argument.hasPrefix("-"), argument != "-" else {
                positionals.append(argument)
                continue
            }
            if argument == "--" {
                optionsEnded = true
                continue
            }
            if argument == "-h" {
                self.flags.insert("help")
                continue
            }
            guard argument.hasPrefix("--") else {
                throw UsageError("unknown option '\(argument)'")
            }
            var name = String(argument.dropFirst(2))
            var value: String?
            if let equals = name.firstIndex(of: "=") {
                value = String(name[name.index(after: equals)...])
                name = String(name[..<equals])
            }
            if flags.contains(name) {
                guard value == nil else { throw UsageError("--\(name) takes no value") }
                self.flags.insert(name)
            } else if options.contains(name) {
                if value == nil {
                    guard index < arguments.count else { throw UsageError("--\(name) needs a value") }
                    value = arguments[index]
                    index += 1
                }
                self.options[name] = value
            } else {
                throw UsageError("unknown option '--\(name)'")
            }
        }
    }

    /// The positional arguments, checked to be between `minimum` and `maximum` in number.
    /// - Throws: `UsageError` naming what is missing or extra.
    package func positionals(_ names: [String], required: Int) throws -> [String] {
        if positionals.count < required {
            throw UsageError("missing \(names[positionals.count])")
        }
        if positionals.count > names.count {
            throw UsageError("unexpected argument '\(positionals[names.count])'")
        }
        return positionals
    }

    /// The value of option `name` as a non-negative integer, if given.
    /// - Throws: `UsageError` when it is not one.
    package func integer(_ name: String) throws -> Int? {
        guard let text = options[name] else { return nil }
        guard let value = Int(text), value >= 0 else {
            throw UsageError("--\(name) needs a whole number of at least 0, got '\(text)'")
        }
        return value
    }
}

/// A command used the wrong way: exit status 2, with the message and a pointer to `--help`.
package struct UsageError: Error, Equatable, CustomStringConvertible {
    package var message: String

    package init(_ message: String) {
        self.message = message
    }

    package var description: String { message }
}
