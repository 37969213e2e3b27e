#!/usr/bin/env node
// dynalite.js starts an in-memory dynalite (a DynamoDB-compatible server) on
// 127.0.0.1 and a free port, for the checkpoint store tests.
//
// It prints DYNAMODB_ENDPOINT=http://127.0.0.1:PORT as its first line on
// stdout, then serves until its stdin closes, or it gets SIGTERM or SIGINT:
// a test that starts it as a subprocess with a pipe on stdin cannot leak it,
// even if the test binary is killed.
//
// dynalite's own CLI treats --port 0 as its default port 4567, so this script
// calls the server factory and listens on port 0 itself.
//
// Usage: node test/dynamodb/dynalite.js   (after `npm ci` in the repo root)
'use strict'

const dynalite = require('dynalite')

const server = dynalite({
  // Tables are ACTIVE at once: tests create one table each.
  createTableMs: 0,
  deleteTableMs: 0,
  updateTableMs: 0,
  // No path: LevelDB in memory, gone with the process.
})

let stopping = false
function stop (code) {
  if (stopping) return
  stopping = true
  // The data lives in memory: nothing to flush, so do not wait for
  // keep-alive connections to drain.
  server.close()
  server.closeAllConnections()
  process.exit(code)
}

server.on('error', (err) => {
  console.error('dynalite: ' + err.message)
  process.exit(1)
})

server.listen(0, '127.0.0.1', () => {
  const { port } = server.address()
  process.stdout.write('DYNAMODB_ENDPOINT=http://127.0.0.1:' + port + '\n')
})

process.on('SIGTERM', () => stop(0))
process.on('SIGINT', () => stop(0))
process.stdin.on('end', () => stop(0))
process.stdin.on('error', () => stop(0))
process.stdin.resume()

// dynalite rethrows the error of a request whose client went away mid-body
// (req.on('error', throw)); a test that kills its client process must not
// take the server down with it. Real DynamoDB shrugs such clients off too.
process.on('uncaughtException', (err) => {
  if (err && (err.code === 'ECONNRESET' || err.code === 'EPIPE' || err.message === 'aborted')) {
    console.error('dynalite: client went away: ' + err.message)
    return
  }
  console.error(err)
  process.exit(1)
})
