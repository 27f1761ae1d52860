import Foundation
import PostgreSQLBackend
import Storage
import StorageTestBackends
import StorageTestSupport
import Testing

/// Roles without rights, TLS verification, passwords kept out of messages.
@Suite(.dedicatedThreads) struct PostgreSQLSecurityTests {
    struct Secret: Codable, Equatable {
        var id: Int64
        var text: String
    }

    /// A role that may log in but has no rights on the store's schema gets `.permissionDenied`
    /// naming the collection, for reads and writes; and one that may not create the schema gets
    /// `.permissionDenied` at open. Nothing crashes, nothing is written.
    @Test func aRoleWithoutRightsGetsAClearError() throws {
        try withStore("rights") { store, path in
            try store.save(Secret(id: 1, text: "owner's"))
            let role = "norights_" + PostgreSQLTestServer.schema(for: path).dropFirst(5).prefix(8)
            let raw = try RawConnection(try PostgreSQLTestServer.url())
            try raw.execute("DROP ROLE IF EXISTS \(role); CREATE ROLE \(role) LOGIN")
            defer { _ = try? raw.execute("DROP OWNED BY \(role); DROP ROLE IF EXISTS \(role)") }
            let schema = PostgreSQLTestServer.schema(for: path)
            try raw.execute("GRANT USAGE ON SCHEMA \"\(schema)\" TO \(role)")
            try raw.execute("GRANT SELECT ON \"\(schema)\".\"storage$catalog\" TO \(role)")

            let intruder = try ObjectStore(
                backend: .postgreSQL(url: try url(user: role), configuration: .init(schema: schema))
            )
            let read = expectStorageError(.permissionDenied) { _ = try intruder.fetchAll(Secret.self) }
            #expect(read?.collection == "Secret", "\(String(describing: read))")
            expectStorageError(.permissionDenied) { try intruder.save(Secret(id: 2, text: "intruder's")) }
            #expect(try store.fetchAll(Secret.self) == [Secret(id: 1, text: "owner's")])

            // The role may not create schemas in the database (PUBLIC may not, by default).
            let open = expectStorageError(.permissionDenied) {
                _ = try PostgreSQLStorageBackend(
                    url: try url(user: role),
                    configuration: .init(schema: schema + "_new")
                )
            }
            #expect(open?.message.contains(schema + "_new") == true, "\(String(describing: open))")
        }
    }

    /// The backend's description of its server never includes the password of its URL.
    @Test func theServerDescriptionHidesThePassword() throws {
        let url = try PostgreSQLTestServer.url() + "&password=do-not-show-me"
        let backend = try PostgreSQLStorageBackend(url: url, configuration: .init(schema: "test_description"))
        #expect(!backend.server.contains("do-not-show-me"))
        #expect(!"\(backend)".contains("do-not-show-me"))
        #expect(backend.server.contains("postgres"))
    }

    /// `sslmode=verify-full` against a server whose certificate a throwaway CA signed: with that
    /// CA the store opens and works; with another CA the open is refused with `.cannotOpen`.
    @Test func verifyFullConnectsWithTheRightCAAndRefusesAnother() throws {
        try TemporaryDirectory.with("postgres-tls") { directory in
            let folder = directory.path
            func openssl(_ arguments: String) throws {
                let child = try Child("/bin/sh", ["-c", "cd '\(folder)' && openssl " + arguments])
                let (status, lines) = child.wait()
                guard status == 0 else { throw StorageError(.io, "openssl \(arguments): \(lines)") }
            }
            for ca in ["ca", "other"] {
                try openssl(
                    "req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 2 -subj /CN=\(ca)-test-ca -keyout \(ca).key -out \(ca).pem"
                )
            }
            try openssl(
                "req -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -subj /CN=127.0.0.1 -keyout server.key -out server.csr"
            )
            try "subjectAltName=IP:127.0.0.1\n".write(toFile: folder + "/san.ext", atomically: true, encoding: .utf8)
            try openssl(
                "x509 -req -in server.csr -CA ca.pem -CAkey ca.key -CAcreateserial -days 2 -extfile san.ext -out server.pem"
            )

            let cluster = folder + "/cluster"
            try PostgreSQLTestServer.run(["start", cluster])
            defer { _ = try? PostgreSQLTestServer.run(["stop", cluster]) }
            for file in ["server.pem", "server.key"] {
                try FileManager.default.copyItem(atPath: folder + "/" + file, toPath: cluster + "/data/" + file)
            }
            let settings = "\nssl = on\nssl_cert_file = 'server.pem'\nssl_key_file = 'server.key'\n"
            let configuration = try FileHandle(forWritingAtPath: cluster + "/data/postgresql.conf").unwrap()
            configuration.seekToEndOfFile()
            configuration.write(Data(settings.utf8))
            configuration.closeFile()
            let owner = try Child(
                "/bin/sh",
                [
                    "-c",
                    "[ $(id -u) -ne 0 ] || chown postgres '\(cluster)'/data/server.*; chmod 600 '\(cluster)'/data/server.key",
                ]
            )
            #expect(owner.wait().status == 0)
            try PostgreSQLTestServer.run(["reload", cluster])
            let port = try String(contentsOfFile: cluster + "/port", encoding: .utf8)
                .trimmingCharacters(in: .whitespacesAndNewlines)

            func url(ca: String) -> String {
                "host=127.0.0.1 port=\(port) user=postgres dbname=postgres sslmode=verify-full sslrootcert=\(folder)/\(ca).pem"
            }
            let store = try ObjectStore(backend: .postgreSQL(url: url(ca: "ca")))
            try store.save(Secret(id: 1, text: "over TLS"))
            #expect(try store.fetch(Secret.self, id: 1)?.text == "over TLS")
            let raw = try RawConnection(url(ca: "ca"))
            #expect(try raw.execute("SELECT ssl::text FROM pg_stat_ssl WHERE pid = pg_backend_pid()") == ["true"])

            let refused = expectStorageError(.cannotOpen) {
                _ = try PostgreSQLStorageBackend(url: url(ca: "other"))
            }
            #expect(refused?.message.contains("127.0.0.1:\(port)") == true, "\(String(describing: refused))")
        }
    }
}

extension Optional {
    fileprivate func unwrap() throws -> Wrapped {
        guard let self else { throw StorageError(.io, "missing value") }
        return self
    }
}
