// Type-aware linting: floating promises and unsafe `any` flows are errors. Import cycles are
// errors too (one module's start must not depend on the other's); long functions are warned.
import js from "@eslint/js";
import tseslint from "typescript-eslint";
import prettier from "eslint-config-prettier";
import { createNodeResolver, importX } from "eslint-plugin-import-x";

export default tseslint.config(
  { ignores: ["node_modules/", ".tools/", "build/", "dist/", "coverage/", "generated/"] },
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    plugins: { "import-x": importX },
    settings: {
      // Imports name the compiled `.js`; the module followed is the `.ts` beside it.
      "import-x/resolver-next": [createNodeResolver({ extensionAlias: { ".js": [".ts", ".js"] } })],
      "import-x/extensions": [".ts", ".js"],
      "import-x/parsers": { "@typescript-eslint/parser": [".ts"] },
    },
    rules: {
      "@typescript-eslint/no-floating-promises": "error",
      "@typescript-eslint/no-misused-promises": "error",
      "@typescript-eslint/consistent-type-imports": "error",
      "@typescript-eslint/no-unused-vars": [
        "error",
        { argsIgnorePattern: "^_", varsIgnorePattern: "^_" },
      ],
      "import-x/no-cycle": "error",
    },
  },
  {
    // Tests are long describe blocks by nature; the sources' functions should each fit a screen.
    files: ["src/**/*.ts"],
    rules: {
      "max-lines-per-function": ["warn", { max: 80, skipBlankLines: true, skipComments: true }],
    },
  },
  { files: ["**/*.js", "bin/**"], ...tseslint.configs.disableTypeChecked },
  prettier,
);
