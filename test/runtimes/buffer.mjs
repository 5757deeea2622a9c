// Injected into the portable suites' bundle (test/runtimes/build.mjs) for the tests' own `Buffer`.
export { Buffer } from 'node:buffer';
