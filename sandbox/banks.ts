/** FPS member banks served by sbp/banks (identifiers in the FPS member-id format). */
export const FPS_BANKS: ReadonlyArray<{ id: string; eng_name: string; ru_name: string }> = [
  { id: '100000000111', eng_name: 'Sberbank', ru_name: 'Сбербанк' },
  { id: '100000000004', eng_name: 'T-Bank', ru_name: 'Т-Банк' },
  { id: '110000000005', eng_name: 'VTB Bank', ru_name: 'Банк ВТБ' },
  { id: '100000000008', eng_name: 'Alfa-Bank', ru_name: 'Альфа-Банк' },
  { id: '100000000007', eng_name: 'Raiffeisenbank', ru_name: 'Райффайзенбанк' },
  { id: '100000000001', eng_name: 'Gazprombank', ru_name: 'Газпромбанк' },
  { id: '100000000999', eng_name: 'Sandbox Test Bank', ru_name: 'Тестовый банк песочницы' },
];

export function isFpsBank(id: string): boolean {
  return FPS_BANKS.some((b) => b.id === id);
}
