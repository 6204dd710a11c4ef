/**
 * What the demo corpus is about: eight news topics, each with the templates its articles are
 * written from, and the outlets that publish them. Every place, person, party, club and
 * company is made up.
 *
 * A template fills `{name}` from the article's draws (one value a name for the whole article,
 * so a story stays consistent; `name2` is a second, different value of the same pool),
 * `{n:2-9}` with a whole number and `{d:1.5-4.0}` with one decimal, each drawn anew.
 */

export interface DemoTopic {
  key: string;
  /** What it is about, for the CLI's summary. */
  name: string;
  /** A word in every headline of the topic: the keyword query the demo prints. */
  word: string;
  /** A `text` query for text mode. */
  phrase: string;
  /** Its articles are published between `days[0]` and `days[1]` days ago. */
  days: [number, number];
  pools: Record<string, readonly string[]>;
  headlines: readonly string[];
  /** First sentences (also the snippet). */
  leads: readonly string[];
  sentences: readonly string[];
  /** The sentence an edit appends. */
  updates: readonly string[];
}

export interface DemoSource {
  name: string;
  homepage: string;
  /** Its share of the articles. */
  weight: number;
}

export const DEMO_SOURCES: readonly DemoSource[] = [
  { name: 'Daily Ledger', homepage: 'https://dailyledger.example/', weight: 0.28 },
  { name: 'Wire One', homepage: 'https://wireone.example/', weight: 0.24 },
  { name: 'Harbor Post', homepage: 'https://harborpost.example/', weight: 0.18 },
  { name: 'Metro Courier', homepage: 'https://metrocourier.example/', weight: 0.14 },
  { name: 'Northern Gazette', homepage: 'https://northerngazette.example/', weight: 0.1 },
  { name: 'Café Économie', homepage: 'https://cafe-economie.example/', weight: 0.06 },
];

/** Pools every topic draws from besides its own. */
export const SHARED_POOLS: Record<string, readonly string[]> = {
  place: [
    'Northbridge',
    'Port Aster',
    'Greyfield',
    'Carden',
    'Eastmoor',
    'Wellham',
    'Kingsreach',
    'Millbrook',
    'Saltmarsh',
    'Highcombe',
    'Lakeside',
    'Ferrow Bay',
  ],
  country: ['Aldmere', 'Veloria', 'Kestria', 'Brennland', 'Calvory', 'Sundara'],
  person: [
    'Maya Okafor',
    'Tomas Lindqvist',
    'Ines Moreau',
    'Kofi Adeyemi',
    'Lena Brandt',
    'Arjun Rahman',
    'Sofia Castillo',
    'Daniel Whitfield',
    'Aiko Nakamura',
    'Omar Haddad',
    'Freya Kowalski',
    'Pablo Duarte',
    'Nadia Yilmaz',
    'Jonas Fischer',
    'Priya Silva',
    'Elias Petrov',
  ],
  weekday: ['Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday'],
  month: ['January', 'February', 'March', 'April', 'May', 'June', 'July', 'August', 'September', 'October', 'November', 'December'],
  org: ['Harbor Capital', 'Northgate Securities', 'the Fernwood Institute', 'Kestrel Research', 'Brightwater Analytics'],
};

export const DEMO_TOPICS: readonly DemoTopic[] = [
  {
    key: 'rates',
    name: 'central banks and interest rates',
    word: 'rates',
    phrase: 'central bank holds interest rates as inflation cools',
    days: [60, 0],
    pools: { bank: ['the Reserve Bank of Aldmere', 'the Veloria Central Bank', 'the Kestrian National Bank', 'the Bank of Brennland'] },
    headlines: [
      '{bank} holds rates at {d:2.0-6.0}% as inflation cools',
      '{bank} cuts rates by a quarter point',
      'Markets bet on lower rates after {bank} minutes',
      'Governor {person} signals rates will stay high for longer',
      'Mortgage holders in {place} feel the squeeze as rates rise',
      'Why {bank} kept rates on hold this month',
    ],
    leads: [
      '{bank} left its main interest rate unchanged at {d:2.0-6.0}% on {weekday}, saying inflation was falling more slowly than it had hoped.',
      '{bank} cut its benchmark rate by 25 basis points on {weekday}, its first move in {n:3-14} months.',
      'Policymakers at {bank} voted {n:5-7} to {n:2-4} to keep borrowing costs where they are.',
    ],
    sentences: [
      'Governor {person} told reporters that the committee would watch wage growth closely before acting again.',
      'Consumer prices rose {d:1.5-5.5}% in the year to last month, above the 2% target.',
      'Economists at {org} now expect the next cut in {month}.',
      'Bond yields fell {n:3-18} basis points after the announcement, and the currency slipped.',
      'Mortgage lenders in {place} said they would pass the change on to borrowers within days.',
      'Two members of the committee argued for a larger move, according to the minutes.',
      'Business groups welcomed the decision but warned that credit remains expensive for small firms.',
      'The bank raised its growth forecast for next year to {d:0.5-2.5}%.',
      'Savers have enjoyed the best returns in a decade, but first-time buyers have been priced out.',
      '{person2}, chief economist at {org}, said the bank was behind the curve on inflation.',
    ],
    updates: [
      'Update: {bank} later published its full forecast, which sees inflation back at target by {month} next year.',
      'Update: Governor {person} told lawmakers on {weekday} that further cuts were not a done deal.',
    ],
  },
  {
    key: 'strike',
    name: 'a port strike',
    word: 'strike',
    phrase: 'dock workers strike at the port over pay and automation',
    days: [45, 15],
    pools: {
      port: ['Port Aster', 'Ferrow Bay', 'Saltmarsh harbour', 'the port of Kingsreach'],
      union: ["the Dockers' Union", 'the Harbour Workers Alliance', 'the Transport and Port Workers union'],
      operator: ['Asterline Terminals', 'Bayside Logistics', 'Meridian Ports'],
    },
    headlines: [
      'Dock workers at {port} extend strike into a new week',
      'Port strike: {n:20-90} ships wait off {port}',
      '{union} rejects pay offer as strike at {port} goes on',
      'Strike at {port} hits supermarket supplies',
      'Talks to end {port} strike resume on {weekday}',
      'Exporters count the cost of the strike at {port}',
    ],
    leads: [
      'Dock workers at {port} walked out again on {weekday}, extending a strike that has halted most container traffic for {n:6-25} days.',
      'The strike at {port} entered another week as {union} rejected a pay offer of {d:3.0-7.5}% from {operator}.',
      'More than {n:2-9},000 members of {union} stayed away from the cranes at {port} on {weekday}.',
    ],
    sentences: [
      '{operator} said {n:20-90} vessels were anchored offshore waiting for a berth.',
      'Union organiser {person} said members wanted guarantees that automation would not cost jobs.',
      'Retailers warned that shelves could empty of imported fruit within {n:2-5} weeks.',
      'Freight rates on routes into {port} have risen {n:15-60}% since the strike began.',
      'Some shipping lines have diverted cargo to {place}, adding days to deliveries.',
      'The transport minister urged both sides to return to talks without preconditions.',
      "{operator} called the union's demands unaffordable and said it had made its final offer.",
      'Pickets gathered at the main gate before dawn, and police reported no arrests.',
      'Farmers said perishable exports were rotting in containers on the quay.',
      'A mediator, {person2}, has been appointed to lead the next round of talks.',
    ],
    updates: [
      'Update: {union} said on {weekday} evening it would put a revised offer to a vote of its members.',
      'Update: {operator} confirmed that {n:3-12} ships had been cleared to unload under an emergency agreement.',
    ],
  },
  {
    key: 'storm',
    name: 'a winter storm',
    word: 'storm',
    phrase: 'storm brings flooding and power cuts to the coast',
    days: [24, 16],
    pools: {
      storm: ['Storm Elin', 'Storm Marek', 'Storm Odile', 'Storm Bram'],
      region: ['the north coast', 'the Carden valley', 'the western isles', 'the lowlands around Greyfield'],
    },
    headlines: [
      '{storm} brings {n:60-180} mm of rain to {region}',
      '{storm}: thousands without power in {place}',
      'Flood warnings issued as {storm} nears {region}',
      'Clean-up begins after {storm} batters {place}',
      'Trains cancelled and schools closed as storm hits {place}',
      'Insurers brace for claims after {storm}',
    ],
    leads: [
      '{storm} swept across {region} overnight, bringing gusts of up to {n:90-150} km/h and {n:60-180} mm of rain.',
      'Emergency crews in {place} worked through the night after {storm} brought down trees and power lines.',
      'Forecasters issued a red warning for {region} as {storm} moved in from the sea on {weekday}.',
    ],
    sentences: [
      'About {n:12-80},000 homes were without power on {weekday} morning, the grid operator said.',
      'The river at {place} rose {d:1.0-3.5} metres above its normal level before dawn.',
      'Rail operators cancelled services between {place} and {place2} until the lines are checked.',
      "Mayor {person} said the town's flood barriers had held, but several streets were under water.",
      'Schools across {region} stayed closed and residents were told to avoid unnecessary travel.',
      'The weather service said the storm was the strongest to hit the area in {n:8-30} years.',
      'Volunteers filled sandbags outside the town hall in {place2}.',
      'Insurers estimated early claims at {n:40-300} million.',
      'Coastguards rescued {n:2-9} people from a yacht that lost its mast off the coast.',
      'Forecasters expect calmer weather by the weekend, though more rain is likely.',
    ],
    updates: [
      'Update: power has been restored to most homes in {place}, the grid operator said on {weekday}.',
      'Update: the red warning for {region} was lifted on {weekday} afternoon.',
    ],
  },
  {
    key: 'election',
    name: 'elections',
    word: 'election',
    phrase: 'election results and coalition talks',
    days: [35, 5],
    pools: { party: ['the Progress Party', 'the Civic Alliance', 'the Green Union', "the Workers' Front", 'the Liberal Centre'] },
    headlines: [
      '{party} leads early count in {country} election',
      '{country} election: turnout reaches {n:55-78}%',
      '{person} concedes as {party} wins the {place} election',
      'Recount ordered in {place} after election day dispute',
      'Coalition talks begin after {country} election',
      'Five things to watch on {country} election night',
    ],
    leads: [
      'Polls closed in {country} on Sunday, and early results put {party} ahead with {d:28.0-41.0}% of the vote.',
      '{party} won the most seats in the {country} election but fell short of a majority, official results showed.',
      'Voters in {place} went to the polls on {weekday} in an election dominated by housing and the cost of living.',
    ],
    sentences: [
      'Turnout was {n:55-78}%, up from the last election {n:4-5} years ago.',
      'Candidate {person} told supporters in {place} that the result was a mandate for change.',
      '{party2} finished second and said it was ready to talk to any party about a coalition.',
      'The electoral commission said counting in {place2} would continue overnight.',
      'Observers reported long queues at polling stations but no serious irregularities.',
      'Young voters swung sharply towards smaller parties, an exit poll suggested.',
      'The outgoing prime minister, {person2}, conceded defeat shortly after midnight.',
      'Markets barely moved on the result, which had been widely expected.',
      'A recount was ordered in {n:2-6} districts where the margin was under 100 votes.',
      'Coalition talks are expected to take weeks, analysts at {org} said.',
    ],
    updates: [
      'Update: final results published on {weekday} confirmed {party} as the largest party, with {n:42-70} seats.',
      'Update: {party} and {party2} said on {weekday} they had agreed to open formal coalition talks.',
    ],
  },
  {
    key: 'chips',
    name: 'chip export controls',
    word: 'chip',
    phrase: 'export controls on advanced chips',
    days: [60, 0],
    pools: { maker: ['Lumen Semiconductor', 'Kestrel Micro', 'Arden Devices', 'Novalith'] },
    headlines: [
      '{country} tightens chip export rules',
      'Chip exports to {country2} fall {n:12-45}% in a month',
      '{maker} warns new chip controls will cost it sales',
      '{country} and {country2} trade barbs over chip export licences',
      'Chip makers rush to ship before export ban takes effect',
      'What the new chip export rules mean for {place}',
    ],
    leads: [
      '{country} announced new limits on exports of advanced chip technology to {country2} on {weekday}.',
      'Exports of memory and logic chips from {country} fell {n:12-45}% last month as new licensing rules took effect.',
      '{maker} said on {weekday} that export restrictions would cut its revenue by about {n:3-15}% this year.',
    ],
    sentences: [
      'The rules cover processors made on the most advanced nodes and the machines used to make them.',
      'Trade minister {person} said the controls were needed to protect national security.',
      "{country2}'s commerce ministry called the measures discriminatory and promised a response.",
      'Shares in {maker} fell {d:2.0-9.5}% in early trading.',
      'Companies will need a licence for each shipment, which officials said would take up to {n:30-90} days.',
      'Analysts at {org} said the rules could speed up efforts in {country2} to build its own chip industry.',
      'A new fabrication plant near {place} is due to start production next year.',
      'Industry groups said they had been given only {n:2-6} weeks to comply.',
      "Customers stockpiled chips ahead of the deadline, inflating last quarter's figures.",
      '{person2}, a trade lawyer, said the rules were likely to be challenged in court.',
    ],
    updates: [
      'Update: {country} published the full list of covered products on {weekday}, running to {n:40-120} pages.',
      'Update: {maker} said it had received its first export licences under the new rules.',
    ],
  },
  {
    key: 'final',
    name: 'a football cup final',
    word: 'final',
    phrase: 'football cup final won with a late goal',
    days: [12, 2],
    pools: {
      club: ['Northbridge Rovers', 'Port Aster United', 'Greyfield Athletic', 'Carden City', 'Eastmoor Wanderers', 'Kingsreach FC'],
      cup: ['the National Cup', 'the League Cup', 'the Continental Trophy'],
      stadium: ['the Harbour Stadium', 'Millbrook Park', 'the National Arena'],
    },
    headlines: [
      '{club} beat {club2} {n:2-4}-{n:0-1} in {cup} final',
      '{club} lift the trophy after a dramatic final',
      'Final preview: can {club2} stop {club}?',
      '{person} scores twice as {club} win {cup} final',
      'Tickets for the final at {stadium} sell out in hours',
      '{club2} manager blames referee after final defeat',
    ],
    leads: [
      '{club} won {cup} final on {weekday}, beating {club2} {n:2-4}-{n:0-1} in front of {n:40-80},000 fans at {stadium}.',
      'A late goal from {person} settled {cup} final at {stadium}, where {club} edged {club2}.',
      '{club} and {club2} meet in {cup} final at {stadium} on Saturday, {n:5-30} years after their last final.',
    ],
    sentences: [
      '{person} opened the scoring after {n:5-40} minutes with a low shot into the far corner.',
      '{club2} equalised before half-time but could not keep up in the second half.',
      'The {club} manager, {person2}, said it was the proudest day of her career.',
      'Fans queued outside {stadium} from early morning, and the trains from {place} were full.',
      "It is the club's first major trophy in {n:8-40} years.",
      'The referee showed {n:3-8} yellow cards in a bad-tempered second half.',
      'Police said the day passed off peacefully, with {n:2-12} arrests.',
      'The winners will play in the continental competition next season.',
      'An open-top bus parade is planned through {place} on Monday.',
      '{club2} had beaten the holders on penalties to reach the final.',
    ],
    updates: [
      'Update: {club} said on {weekday} that {person} had signed a new contract for {n:2-4} more years.',
      "Update: the football association said it would review the referee's decisions in the final.",
    ],
  },
  {
    key: 'harvest',
    name: 'a drought and the harvest',
    word: 'harvest',
    phrase: 'drought cuts the wheat harvest',
    days: [50, 10],
    pools: {
      crop: ['wheat', 'barley', 'maize', 'rapeseed'],
      region: ['the southern plains', 'the Carden valley', 'the eastern provinces', 'the Wellham uplands'],
    },
    headlines: [
      'Drought cuts {crop} harvest in {region}',
      'Farmers in {place} bring the harvest in early as rain fails',
      '{crop} prices jump as harvest forecast is cut',
      'Harvest down {n:10-35}%, farm ministry says',
      'Water limits threaten the harvest in {place}',
      "Why this year's harvest matters for bread prices",
    ],
    leads: [
      'Farmers across {region} expect a {crop} harvest {n:10-35}% below average after the driest spring in {n:20-60} years.',
      'The farm ministry cut its harvest forecast for {crop} on {weekday}, citing weeks without rain.',
      'In {place}, combines started on the {crop} harvest {n:2-4} weeks earlier than usual.',
    ],
    sentences: [
      'Farmer {person} said half of her fields had yielded almost nothing this year.',
      'Reservoirs in {region} are at {n:20-45}% of capacity, and irrigation has been rationed.',
      'Futures for {crop} rose {d:2.0-8.0}% on the news.',
      'Millers warned that the price of bread and pasta could rise by the end of the year.',
      'The government promised {n:40-250} million in emergency support for growers.',
      'Agronomists at {org} said the quality of the grain was good despite the smaller harvest.',
      'Some farmers in {place2} have started selling livestock because there is not enough feed.',
      "Rain is forecast for next week, but it comes too late for this year's crops.",
      'Exports will be cut to protect domestic supplies, the ministry said.',
      'Cooperatives are pooling storage so smaller farms can wait for better prices.',
    ],
    updates: [
      'Update: the ministry revised its harvest estimate again on {weekday}, to {n:8-30} million tonnes.',
      'Update: the emergency support scheme opens to applications on {weekday}, officials said.',
    ],
  },
  {
    key: 'rocket',
    name: 'a rocket launch',
    word: 'rocket',
    phrase: 'rocket launch puts satellites into orbit',
    days: [30, 0],
    pools: {
      agency: ['the Aldmere Space Agency', 'Orbital Dynamics', 'Stellar Works'],
      rocket: ['Heron-2', 'Vela', 'Kite IV'],
      site: ['the Saltmarsh spaceport', 'the Highcombe launch site', 'the Ferrow Bay pad'],
    },
    headlines: [
      '{rocket} rocket reaches orbit on its first try',
      '{agency} delays {rocket} rocket launch again',
      'Rocket launch from {site} draws thousands',
      '{rocket} rocket carries {n:3-40} satellites to orbit',
      'Engine fault ends {rocket} rocket flight',
      'Inside the rocket factory at {place}',
    ],
    leads: [
      'A {rocket} rocket lifted off from {site} on {weekday}, carrying {n:3-40} small satellites into orbit.',
      '{agency} postponed the launch of its {rocket} rocket again, citing a sensor fault.',
      "Thousands gathered near {site} on {weekday} to watch the {rocket} rocket's first flight.",
    ],
    sentences: [
      'The first stage separated after about {n:140-170} seconds and fell into the sea as planned.',
      'Mission director {person} said the team would study the data before the next flight.',
      'The payload includes a weather satellite built by students in {place}.',
      'The launch window opens at {n:6-11} in the morning and lasts {n:20-90} minutes.',
      'Engineers replaced a valve in the upper stage after a test in {month}.',
      '{agency} plans {n:4-12} more launches this year.',
      'Local hotels in {place2} were fully booked for launch week.',
      'Analysts at {org} said reliable launches would bring the cost of reaching orbit down.',
      'Weather officers gave a {n:60-90}% chance of acceptable conditions.',
      'The agency did not say when the next attempt would be made.',
    ],
    updates: [
      'Update: {agency} confirmed on {weekday} that all satellites had made contact with ground stations.',
      'Update: the next {rocket} launch is now set for {month}.',
    ],
  },
];
