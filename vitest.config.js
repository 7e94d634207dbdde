import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    // jsdom, not happy-dom: DOMPurify does not sanitize under happy-dom (cure53/DOMPurify#1457,
    // capricorn86/happy-dom#1810), so sanitizer and rendering tests would pass vacuously there.
    // js/tests/fallback.test.js runs under happy-dom on purpose, to check the widget fails closed.
    environment: "jsdom",
    include: ["js/tests/**/*.test.js"],
    // A hang guard, not a speed check: vitest's default of 5 s per test failed a 0.7 s test on a loaded
    // machine (2 cores, load 5). Speed is measured in bench/, never asserted in tests.
    testTimeout: 120_000,
    hookTimeout: 120_000,
  },
});
