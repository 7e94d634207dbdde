// What js/build.mjs builds for each bundle: __AGENTCELL_CODE__ and __AGENTCELL_KEY__ are defined
// there (the entry's bundle, and its name and hash). See js/src/loader.js.
import { entry } from "./loader.js";

/* global __AGENTCELL_CODE__, __AGENTCELL_KEY__ */
export default entry(__AGENTCELL_CODE__, __AGENTCELL_KEY__);
