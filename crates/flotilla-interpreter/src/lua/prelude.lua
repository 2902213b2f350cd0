-- Builds the globals every script sees: exactly Karmada's library set, with the functions
-- Karmada blocks replaced by ones that raise its error, and Lua 5.1 names Luau lacks.
--
-- This chunk is trusted: it runs once per Lua state, before any script, with Luau's full libraries, and returns the
-- table that becomes the read-only fallback of every script environment. `host` holds the Rust side of the bridge.
--
-- Its own environment is a frozen copy of Luau's globals marked "safe", so calls to built-ins here (rawget, rawset,
-- setmetatable, type, ...) compile to fast calls, which do not trigger the deadline interrupt: the bridge code below
-- runs on every field a script touches. Built-ins are therefore called by their global names, not through locals.
local host = ...

local LAZY, OBJ, ARR = host.lazy, host.obj, host.arr
local fetch, get, forget = host.fetch, host.get, host.forget
local TEMPLATES = host.templates
local error, select = error, select
local builtin_pairs, builtin_ipairs, builtin_next, builtin_unpack = pairs, ipairs, next, unpack
local builtin_tostring, builtin_tonumber = tostring, tonumber
local tinsert, tremove, tconcat, tsort, tgetn, tmaxn = table.insert, table.remove, table.concat, table.sort,
    table.getn, table.maxn

-- Objects handed to a script are converted lazily (see bridge/mod.rs): a table with the LAZY metatable keeps its
-- slot number under the key LAZY, and the bridge keeps the members not handed over yet. Reading a member of an
-- object moves just that member (`get`); assigning one drops it from the bridge's remainder (`forget`); anything that
-- needs the whole table moves every remaining member (`materialize`) and gives the table its shape marker.
local function child(code, template)
    if code >= 0 then
        local t = table.clone(TEMPLATES[template])
        rawset(t, LAZY, code)
        return setmetatable(t, LAZY)
    elseif code == -1 then
        return setmetatable({}, OBJ)
    end
    return setmetatable({}, ARR)
end

local function materialize(t)
    local slot = rawget(t, LAZY)
    if slot == nil then
        return
    end
    local data = { fetch(t, slot) }
    rawset(t, LAZY, nil)
    setmetatable(t, if data[1] then ARR else OBJ)
    local containers_end = 2 + 3 * data[2]
    for i = 3, containers_end, 3 do
        rawset(t, data[i], child(data[i + 1], data[i + 2]))
    end
    for i = containers_end + 1, #data, 2 do
        rawset(t, data[i], data[i + 1])
    end
end

-- The order in which `pairs`, `next` and generalized iteration visit an object's keys (issue 16, item 3): the keys
-- the object had, in the object's order, then the keys the script added, in the order it first added them, as
-- gopher-lua keeps a table's keys in insertion order and Karmada fills a table in the object's order. serde_json's
-- maps hold keys in byte order, which Lua's string comparison follows, so the object's order is recovered by
-- sorting its keys; a script-made table keeps Luau's order. A key the script removes and sets again before a walk
-- counts as added.
--
-- Per call (`invoke` starts each call with none): `additions[t]`, the keys the script added to table `t`, in order;
-- `orders[t]`, `t`'s whole order once a walk needed it (keys added later are appended); `places[t]`, each key's
-- place in that order, made only for `next`, which is given a key to continue from.
local additions, orders, places = nil, nil, nil

local function place_of(t, order)
    local place = places and places[t]
    if place == nil then
        place = {}
        for i, k in ipairs(order) do
            place[k] = i
        end
        places = places or {}
        places[t] = place
    end
    return place
end

local function added(t, k)
    local order = orders and orders[t]
    if order ~= nil then
        local place = place_of(t, order)
        if place[k] == nil then
            local n = #order + 1
            order[n] = k
            place[k] = n
        end
        return
    end
    additions = additions or {}
    local list = additions[t]
    if list == nil then
        additions[t] = { k }
    elseif table.find(list, k) == nil then
        list[#list + 1] = k
    end
end

local function order_of(t)
    local order = orders and orders[t]
    if order ~= nil then
        return order
    end
    local extra = additions and additions[t]
    local skip = nil
    if extra ~= nil then
        skip = {}
        for _, k in ipairs(extra) do
            skip[k] = true
        end
    end
    -- A table made from an object has string keys; another key can only be one a library function set directly,
    -- kept after the object's keys.
    order = {}
    local rest = nil
    for k in next, t do
        if skip == nil or not skip[k] then
            if type(k) == "string" then
                order[#order + 1] = k
            else
                rest = rest or {}
                rest[#rest + 1] = k
            end
        end
    end
    table.sort(order)
    for _, k in ipairs(rest or {}) do
        order[#order + 1] = k
    end
    for _, k in ipairs(extra or {}) do
        order[#order + 1] = k
    end
    orders = orders or {}
    orders[t] = order
    return order
end

-- `pairs` over an object table: an iterator over its order.
local function ordered_pairs(t)
    local order = order_of(t)
    local i = 0
    return function()
        while true do
            i += 1
            local k = order[i]
            if k == nil then
                return nil
            end
            local v = rawget(t, k)
            if v ~= nil then
                return k, v
            end
        end
    end, t, nil
end

-- `next` over an object table, in its order.
local function ordered_next(t, k)
    local order = order_of(t)
    local i = 0
    if k ~= nil then
        i = place_of(t, order)[k]
        if i == nil then
            error("invalid key to 'next'", 2)
        end
    end
    for j = i + 1, #order do
        local key = order[j]
        local v = rawget(t, key)
        if v ~= nil then
            return key, v
        end
    end
    return nil
end

-- Only objects are read member by member, and only by string keys; anything else reads the table whole.
LAZY.__index = function(t, k)
    if type(k) ~= "string" then
        materialize(t)
        return rawget(t, k)
    end
    local kind, value, template = get(rawget(t, LAZY), k)
    if kind == 1 then
        rawset(t, k, value)
        return value
    elseif kind == 2 then
        -- `child`, inlined for the common non-empty case: every Lua call and return runs the deadline interrupt,
        -- which costs more than the rest of a member access.
        if value >= 0 then
            local c = table.clone(TEMPLATES[template])
            rawset(c, LAZY, value)
            value = setmetatable(c, LAZY)
        else
            value = child(value, template)
        end
        rawset(t, k, value)
        return value
    elseif kind == 3 then
        materialize(t)
        return rawget(t, k)
    end
    return nil
end
-- `forget` answers 0 when the object had the key (it keeps its place in the object's order), 1 when the key is
-- new, 2 for an array (moved whole first).
LAZY.__newindex = function(t, k, v)
    if type(k) == "string" then
        local answer = forget(rawget(t, LAZY), k, v == nil)
        if answer == 0 then
            rawset(t, k, v)
            return
        elseif answer == 1 then
            if v ~= nil then
                added(t, k)
            end
            rawset(t, k, v)
            return
        end
    end
    materialize(t)
    -- Now an array or an object: an object's new key goes through OBJ.__newindex, which records it.
    t[k] = v
end
OBJ.__newindex = function(t, k, v)
    if v ~= nil then
        added(t, k)
    end
    rawset(t, k, v)
end
LAZY.__len = function(t)
    materialize(t)
    return rawlen(t)
end
-- Luau's generalized iteration (`for k, v in t do`) must not see the slot number either.
LAZY.__iter = function(t)
    materialize(t)
    if getmetatable(t) == OBJ then
        return ordered_pairs(t)
    end
    return next, t
end
OBJ.__iter = ordered_pairs
-- Scripts cannot reach these tables, but freeze them anyway: the bridge's behaviour must not be changeable.
table.freeze(LAZY)
table.freeze(OBJ)
table.freeze(ARR)

local function force(t)
    if type(t) == "table" and getmetatable(t) == LAZY then
        materialize(t)
    end
    return t
end

local G = {}

for _, name in builtin_ipairs({ "assert", "error", "pcall", "xpcall", "select", "type" }) do
    G[name] = _G[name]
end
G.print = host.print
G._VERSION = "Lua 5.1"
G._GOPHER_LUA_VERSION = "GopherLua 0.1"
G._printregs = function() end

G.next = function(t, k)
    t = force(t)
    if type(t) == "table" and getmetatable(t) == OBJ then
        return ordered_next(t, k)
    end
    return builtin_next(t, k)
end
G.pairs = function(t)
    t = force(t)
    if type(t) == "table" and getmetatable(t) == OBJ then
        return ordered_pairs(t)
    end
    return builtin_pairs(t)
end
G.ipairs = function(t)
    return builtin_ipairs(force(t))
end
G.unpack = function(t, ...)
    return builtin_unpack(force(t), ...)
end

-- Numbers print as Go prints them, as under gopher-lua: integral values without a decimal point, others in Go's
-- shortest form. Integral values in the int64 range take the fast path.
local gonumber = host.number_to_string
local function tostring_go(v)
    if type(v) == "number" then
        if v == v and v % 1 == 0 and v > -9.2233720368547758e18 and v < 9.2233720368547758e18 then
            return string.format("%d", v)
        end
        return gonumber(v)
    end
    return builtin_tostring(v)
end
G.tostring = tostring_go

local parse_number = host.parse_number
G.tonumber = function(v, base)
    if base ~= nil then
        return builtin_tonumber(v, base)
    end
    local kind = type(v)
    if kind == "number" then
        return v
    elseif kind == "string" then
        return parse_number(v)
    end
    return nil
end

local function blocked(name)
    return function()
        error("call function " .. name .. " is not supported in karmada customized resourceinterpreter.", 2)
    end
end
for _, name in builtin_ipairs({
    "collectgarbage", "dofile", "getfenv", "getmetatable", "load", "loadfile", "loadstring", "rawequal", "rawget",
    "rawset", "setfenv", "setmetatable", "module", "newproxy",
}) do
    G[name] = blocked(name)
end

G.table = {
    getn = function(t)
        return tgetn(force(t))
    end,
    maxn = function(t)
        return tmaxn(force(t))
    end,
    concat = function(t, ...)
        return tconcat(force(t), ...)
    end,
    insert = function(t, ...)
        return tinsert(force(t), ...)
    end,
    remove = function(t, ...)
        return tremove(force(t), ...)
    end,
    sort = function(t, ...)
        return tsort(force(t), ...)
    end,
}

-- The string library: Karmada's subset, a length limit on string arguments, and gsub/rep/dump refused.
local MAX_STRING = 1000000
local function check_length(s)
    if type(s) == "string" and #s > MAX_STRING then
        error(string.format("string length %d exceeds the maximum allowed input string length %d in Karmada lua "
            .. "string lib, please check your lua script.", #s, MAX_STRING), 3)
    end
end
local function unsupported(name)
    return function()
        error("The Lua function string." .. name .. " is not supported by Karmada. If you believe this function is "
            .. "essential for your use case, please submit an issue to let us know why you need it.", 2)
    end
end
local S = {}
for _, name in builtin_ipairs({ "byte", "lower", "reverse", "sub", "upper" }) do
    local f = string[name]
    S[name] = function(s, ...)
        check_length(s)
        return f(s, ...)
    end
end
for _, name in builtin_ipairs({ "find", "match", "gmatch" }) do
    local f = string[name]
    S[name] = function(s, pattern, ...)
        check_length(s)
        check_length(pattern)
        return f(s, pattern, ...)
    end
end
S.gfind = S.gmatch
S.len = string.len
S.char = string.char
S.dump = unsupported("dump")
S.gsub = unsupported("gsub")
S.rep = unsupported("rep")

-- string.format follows Go's fmt where a script can tell, as under gopher-lua: `%s` prints numbers as
-- `tostring` does and the integer verbs truncate toward zero.
local format = string.format
S.format = function(fmt, ...)
    check_length(fmt)
    local n = select("#", ...)
    if n == 0 then
        return format(fmt)
    end
    local args = { ... }
    local i = 0
    for spec in string.gmatch(fmt, "%%[-+ #0]*%d*%.?%d*(.)") do
        if spec ~= "%" then
            i = i + 1
            local v = args[i]
            if type(v) == "number" then
                if spec == "s" or spec == "q" then
                    args[i] = tostring_go(v)
                elseif (spec == "d" or spec == "x" or spec == "X" or spec == "o" or spec == "c") and v % 1 ~= 0 then
                    args[i] = v < 0 and math.ceil(v) or math.floor(v)
                end
            end
        end
    end
    return format(fmt, builtin_unpack(args, 1, n))
end
G.string = S

local M = {}
for _, name in builtin_ipairs({
    "abs", "acos", "asin", "atan", "atan2", "ceil", "cos", "cosh", "deg", "exp", "floor", "fmod", "frexp", "ldexp",
    "log", "log10", "max", "min", "modf", "pow", "rad", "random", "randomseed", "sin", "sinh", "sqrt", "tan", "tanh",
}) do
    M[name] = math[name]
end
M.mod = math.fmod
M.pi = math.pi
-- gopher-lua's math.huge is the largest finite double, not infinity.
M.huge = 1.7976931348623157e308
G.math = M

G.os = { time = host.os_time, date = host.os_date }

-- package and require: only preloaded modules, and the only one is `kube`.
local preload = { kube = function()
    return host.kube
end }
local loaded = { kube = host.kube }
local function preload_searcher(name)
    local loader = preload[name]
    if loader == nil then
        return "\n\tno field package.preload['" .. builtin_tostring(name) .. "']"
    end
    return loader
end
local loaders = { preload_searcher }
G.package = {
    preload = preload,
    loaders = loaders,
    loaded = loaded,
    loadlib = function()
        error("loadlib is not supported", 2)
    end,
}
G.require = function(name)
    if type(name) ~= "string" then
        error("bad argument #1 to 'require' (string expected, got " .. type(name) .. ")", 2)
    end
    local cached = loaded[name]
    if cached ~= nil then
        return cached
    end
    local messages = ""
    for _, searcher in builtin_ipairs(loaders) do
        local loader = searcher(name)
        if type(loader) == "function" then
            -- Every preloaded module is already in `loaded`, which is read-only like all library tables.
            local module = loader(name)
            if module == nil then
                module = true
            end
            return module
        elseif type(loader) == "string" then
            messages = messages .. loader
        end
    end
    error("module " .. name .. " not found:" .. messages, 2)
end

-- Strings index the restricted library, so method calls (`s:lower()`) see the same functions.
getmetatable("").__index = S

-- Runs one call in a single trip from Rust: a fresh environment for the chunk, then the function it defined.
-- Returns false and Karmada's message when the function is missing.
-- Arguments come as (is_container, value) pairs; a container is a slot code (see bridge/mod.rs), made a table
-- here, with room for a typical object's top-level members.
--
-- A script's globals behave as one plain table of globals, as in standard Lua: a script may assign a name the
-- library also has (`error = ''`), and assigning nil to it afterwards leaves it nil, not the library's function.
-- Until a script assigns a library name its environment reads through G directly, the fast path; the first such
-- assignment switches that environment to SHADOWING, which keeps library names in a side table (NIL marks one
-- assigned nil), so a nil never lets G show through again.
local NIL = {}
local SIDES = setmetatable({}, { __mode = "k" })
local SHADOWING = {
    __index = function(env, k)
        local v = SIDES[env][k]
        if v == nil then
            return G[k]
        elseif v == NIL then
            return nil
        end
        return v
    end,
    __newindex = function(env, k, v)
        if G[k] == nil then
            rawset(env, k, v)
        elseif v == nil then
            SIDES[env][k] = NIL
        else
            SIDES[env][k] = v
        end
    end,
}
local ENV = {
    __index = G,
    __newindex = function(env, k, v)
        if G[k] == nil then
            rawset(env, k, v)
            return
        end
        SIDES[env] = { [k] = if v == nil then NIL else v }
        setmetatable(env, SHADOWING)
    end,
}
local function invoke(chunk, name, c1, a1, c2, a2)
    additions, orders, places = nil, nil, nil
    -- Presized for `_G`, the function and a few globals the script sets, so defining them does not rehash.
    local env = setmetatable(table.clone(TEMPLATES[3]), ENV)
    env._G = env
    setfenv(chunk, env)
    chunk()
    local f = rawget(env, name)
    if f == nil then
        return false, "not found function " .. name
    end
    if type(f) ~= "function" then
        return false, name .. " is not a function: " .. type(f)
    end
    -- The arguments are made here rather than by a helper, to spare its calls' interrupts.
    if c1 then
        a1 = if a1 >= 0 then setmetatable({ [LAZY] = a1 }, LAZY) else child(a1, 1)
    end
    if c2 then
        a2 = if a2 >= 0 then setmetatable({ [LAZY] = a2 }, LAZY) else child(a2, 1)
    end
    return true, f(a1, a2)
end

return G, invoke
